"""What mhost registers for torch.compile: Inductor's own C++ scheduling and
Python wrapper, the lines the wrapper writes for mhost, and, where Dynamo's
registry did not ask ``get_device_interface()`` (stock torch), the DeviceInterface."""

from minimal_common.inductor import MinimalDeviceOpOverrides
from torch._dynamo.device_interface import register_interface_for_device
from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.codegen.wrapper import PythonWrapperCodegen

from .device import get_device_interface


def register() -> None:
    register_interface_for_device("mhost", get_device_interface())
    register_backend_for_device("mhost", CppScheduling, PythonWrapperCodegen)
    register_device_op_overrides("mhost", MinimalDeviceOpOverrides())
