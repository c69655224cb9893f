"""mgpu's DeviceInterface: the host-class one, made GPU-class. Like it, this
module imports nothing of Inductor's."""

from minimal_common.interface import HostInterface

from . import device as mgpu


class MgpuInterface(HostInterface):
    Stream = mgpu.Stream
    get_device_properties = staticmethod(mgpu.get_device_properties)
    get_raw_stream = staticmethod(mgpu.get_raw_stream)
    dynamo_constant_fold_fns = (mgpu.is_available, mgpu.get_device_properties)

    class Worker:  # what compile workers ask, without touching the runtime
        set_device = staticmethod(mgpu.set_device)
        current_device = staticmethod(mgpu.current_device)
        get_device_properties = staticmethod(mgpu.get_device_properties)

    @staticmethod
    def is_gpu() -> bool:  # Triton kernels, device guards, GPU heuristics
        return True

    @staticmethod
    def is_triton_capable(device=None) -> bool:
        return True

    @staticmethod
    def get_compute_capability(device=None) -> int:
        props = mgpu.get_device_properties(device)
        return props.major * 10 + props.minor
