"""What mhost registers for torch.compile: a DeviceInterface for Dynamo, and
Inductor's own C++ scheduling and Python wrapper with mhost's op overrides."""

from torch._dynamo.device_interface import DeviceInterface, register_interface_for_device
from torch._inductor.codegen.common import (
    DeviceOpOverrides,
    register_backend_for_device,
    register_device_op_overrides,
)
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.codegen.wrapper import PythonWrapperCodegen

from . import device as mhost


class MhostInterface(DeviceInterface):
    # is_gpu() stays False: Inductor generates C++ kernels and no device guards.
    device = mhost.device
    current_device = staticmethod(mhost.current_device)
    set_device = staticmethod(mhost.set_device)
    device_count = staticmethod(mhost.device_count)
    is_available = staticmethod(mhost.is_available)
    synchronize = staticmethod(mhost.synchronize)


class MhostDeviceOpOverrides(DeviceOpOverrides):
    """The lines of Python the generated wrapper emits for mhost."""

    def set_device(self, device_idx: int) -> str:
        return f"torch.mhost.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.mhost.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.mhost.device({device_idx})"


def register() -> None:
    register_interface_for_device("mhost", MhostInterface)
    register_backend_for_device("mhost", CppScheduling, PythonWrapperCodegen)
    register_device_op_overrides("mhost", MhostDeviceOpOverrides())
