"""The code snippets Inductor emits for acc devices."""

from __future__ import annotations

from torch._inductor.codegen.common import DeviceOpOverrides

from .. import _C
from .._mode import is_gpu_mode


# The C shims acc's C++ wrappers call, its peer's (_cpp_wrapper_over in
# wrapper.py): those of the extern kernels Inductor calls through a shim only
# (matmuls, convolution). Every other ATen fallback is called through
# AOTInductor's proxy executor, or the dispatcher with cpp_wrapper=True, where
# acc's own kernels serve it (slice aoti; DeviceOpOverrides.has_c_shim). The
# overrideable fused attention keeps its peer's shim: neither runtime lookup
# returns its int outputs (max_q, max_k), and the shim fails naming the op.
_PEER_SHIMS = frozenset(
    {
        "mm_out",
        "addmm_out",
        "bmm_out",
        "baddbmm_out",
        "_int_mm_out",
        "convolution",
        "_scaled_dot_product_fused_attention_overrideable",
    }
)


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

    def has_c_shim(self, name: str) -> bool:
        return name in _PEER_SHIMS


# What a C++ wrapper for CUDA kernels needs, which acc over CUDA memory takes
# from CUDA's overrides: acc:i is CUDA device i and its kernels are cubins.
_CUDA_CPP_SNIPPETS = (
    "cpp_device_guard",
    "cpp_aoti_device_guard",
    "cpp_stream_guard",
    "cpp_aoti_stream_guard",
    "cpp_getStreamFromExternal",
    "kernel_header",
    "cpp_stream_type",
    "aoti_get_stream",
    "cpp_kernel_type",
    "cpp_device_ptr",
    "tma_descriptor_helpers",
    "cpp_scratch",
)

# In the kernel driver header: a wrapper built without acc's options fails to
# compile instead of running.
_OPTIONS_CHECK = """#ifndef USE_ACC
#error "acc's C++ wrapper was built without acc's compile options (USE_ACC)"
#endif
"""


def _delegate_to_cuda(name: str) -> object:
    def snippet(self: AccDeviceOpOverrides, *args: object, **kwargs: object) -> object:
        from torch._inductor.codegen.common import get_device_op_overrides

        return getattr(get_device_op_overrides("cuda"), name)(*args, **kwargs)

    snippet.__name__ = name
    return snippet


class AccOverCudaDeviceOpOverrides(AccDeviceOpOverrides):
    """acc over CUDA memory: acc's Python runtime calls and CUDA's C++
    snippets (its build options come from acc's DeviceInterface)."""

    locals().update(
        {n: _delegate_to_cuda(n) for n in _CUDA_CPP_SNIPPETS if hasattr(DeviceOpOverrides, n)}
    )

    def kernel_driver(self) -> str:
        from torch._inductor.codegen.common import get_device_op_overrides

        return _OPTIONS_CHECK + get_device_op_overrides("cuda").kernel_driver()
