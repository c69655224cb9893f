"""What mgpu registers for torch.compile: Triton scheduling whose kernels the
interpreter can run, the Python wrapper, the lines it writes for mgpu, and, where
Dynamo's registry did not ask ``get_device_interface()`` (stock torch), the
DeviceInterface."""

import os

from minimal_common.inductor import MinimalDeviceOpOverrides
from torch._dynamo.device_interface import register_interface_for_device
from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides
from torch._inductor.codegen.triton import TritonKernel, TritonScheduling
from torch._inductor.codegen.wrapper import PythonWrapperCodegen

from .device import get_device_interface


class MgpuDeviceOpOverrides(MinimalDeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from minimal_gpu.device import get_raw_stream as {name}"


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
    register_interface_for_device("mgpu", get_device_interface())
    register_backend_for_device(
        "mgpu",
        InterpreterTritonScheduling if interpreted else TritonScheduling,
        PythonWrapperCodegen,
    )
    register_device_op_overrides("mgpu", MgpuDeviceOpOverrides())
