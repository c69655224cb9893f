"""The code snippets Inductor emits for acc devices."""

from __future__ import annotations

from torch._inductor.codegen.common import DeviceOpOverrides
from torch.utils import cpp_extension

from .. import _C
from .._mode import is_gpu_mode


class AccDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_acc._inductor.runtime import get_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.acc.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.acc.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.acc._DeviceGuard({device_idx})"

    def current_stream(self) -> str:
        return "torch.acc.current_stream()"

    def import_empty_strided_as(self, name: str) -> str:
        return f"from {_C.__name__} import _empty_strided as {name}"

    def cpp_stream_type(self) -> str:
        return "void*"

    def aten_device_type(self) -> str:
        return "at::kPrivateUse1"

    def uses_gpu_cpp_wrapper(self) -> bool:
        return is_gpu_mode()

    def get_cpp_torch_device_options(
        self,
    ) -> tuple[list[str], list[str], list[str], list[str], list[str], list[str]]:
        """Build options for C++ that includes acc's headers: definitions,
        include dirs, cflags, ldflags, library dirs, libraries. acc memory is
        host memory, so the C++ wrapper needs torch's own headers and a define."""
        return (
            ["USE_ACC"],
            cpp_extension.include_paths(),
            [],
            [],
            cpp_extension.library_paths(),
            [],
        )
