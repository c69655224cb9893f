"""What mgpu registers for torch.compile: a GPU-class DeviceInterface, Triton
scheduling whose kernels the interpreter can run, and mgpu's op overrides."""

import os

from torch._dynamo.device_interface import DeviceInterface, register_interface_for_device
from torch._inductor.codegen.common import (
    DeviceOpOverrides,
    register_backend_for_device,
    register_device_op_overrides,
)
from torch._inductor.codegen.triton import TritonKernel, TritonScheduling
from torch._inductor.codegen.wrapper import PythonWrapperCodegen

from . import device as mgpu


class MgpuInterface(DeviceInterface):
    device = mgpu.device
    Stream = mgpu.Stream
    current_device = staticmethod(mgpu.current_device)
    set_device = staticmethod(mgpu.set_device)
    device_count = staticmethod(mgpu.device_count)
    is_available = staticmethod(mgpu.is_available)
    synchronize = staticmethod(mgpu.synchronize)
    get_device_properties = staticmethod(mgpu.get_device_properties)
    get_raw_stream = staticmethod(mgpu.get_raw_stream)

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


class MgpuDeviceOpOverrides(DeviceOpOverrides):
    """The lines of Python the generated wrapper emits for mgpu."""

    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from minimal_gpu.device import get_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.mgpu.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.mgpu.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.mgpu.device({device_idx})"


class InterpreterTritonKernel(TritonKernel):
    """Inductor's Triton kernel, calling mgpu's libdevice
    (minimal_gpu_triton/libdevice.py): Triton's interpreter has none."""

    @classmethod
    def gen_common_triton_imports(cls) -> str:
        # After Inductor's imports, whose libdevice it replaces.
        imports = super().gen_common_triton_imports()
        return f"{imports}\nfrom minimal_gpu_triton import libdevice\n"


class InterpreterTritonScheduling(TritonScheduling):
    kernel_type = InterpreterTritonKernel


def register() -> None:
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    register_interface_for_device("mgpu", MgpuInterface)
    register_backend_for_device(
        "mgpu",
        InterpreterTritonScheduling if interpreted else TritonScheduling,
        PythonWrapperCodegen,
    )
    register_device_op_overrides("mgpu", MgpuDeviceOpOverrides())
