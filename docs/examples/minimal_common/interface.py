"""The DeviceInterface Dynamo and Inductor ask about a device, host-class: mhost's
as it is, mgpu's the base of its own. This module imports Dynamo's registry and
nothing of Inductor's: ``get_device_interface()`` imports it while
``import torch._dynamo`` is still running (backend guide, section 3)."""

from torch._dynamo.device_interface import DeviceInterface

from . import device as runtime


class HostInterface(DeviceInterface):
    # is_gpu() stays False: Inductor generates C++ kernels and no device guards.
    device = runtime.device
    current_device = staticmethod(runtime.current_device)
    set_device = staticmethod(runtime.set_device)
    device_count = staticmethod(runtime.device_count)
    is_available = staticmethod(runtime.is_available)
    synchronize = staticmethod(runtime.synchronize)
    is_bf16_supported = staticmethod(runtime.is_bf16_supported)
    # How Dynamo traces these functions in compiled code (slice rfc2): a
    # constant, and a constant that a guard rechecks.
    dynamo_constant_fold_fns = (runtime.is_available,)
    dynamo_constant_fold_fns_need_guards = (runtime.current_device,)
