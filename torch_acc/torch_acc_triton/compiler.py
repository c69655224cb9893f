"""The acc compiler. Where acc runs over CUDA memory it is Triton's NVIDIA
compiler for the acc target; over host memory, where Triton's interpreter
runs acc's kernels, it refuses to build machine code, and says why."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from triton.backends.compiler import BaseBackend, GPUTarget


@dataclass(frozen=True)
class AccOptions:
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 1
    warp_size: int = 32
    debug: bool = False
    sanitize_overflow: bool = False
    arch: Any = None
    backend_name: str = "acc"
    allowed_dot_input_precisions: tuple[str, ...] = ("ieee",)
    default_dot_input_precision: str = "ieee"
    max_num_imprecise_acc_default: int = 0
    enable_fp_fusion: bool = True
    extern_libs: Any = None
    instrumentation_mode: str = ""

    def hash(self) -> str:
        return hashlib.sha256(repr(self).encode()).hexdigest()


@functools.cache
def _over_cuda() -> type[BaseBackend] | None:
    """NVIDIA's backend retargeted from ``acc`` to ``cuda``, where a CUDA driver
    is usable. Not a module attribute: Triton requires exactly one backend
    class per plugin module."""
    try:
        from triton.backends.nvidia.compiler import CUDABackend
        from triton.backends.nvidia.driver import CudaDriver
    except ImportError:
        return None
    if not CudaDriver.is_active():
        return None

    class AccOverCudaBackend(CUDABackend):
        @staticmethod
        def supports_target(target: GPUTarget) -> bool:
            return target.backend == "acc"

        def __init__(self, target: GPUTarget) -> None:
            super().__init__(target)  # checks that it is asked for acc
            self.target = GPUTarget("cuda", target.arch, target.warp_size)

    return AccOverCudaBackend


class AccBackend(BaseBackend):
    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "acc"

    def __new__(cls, target: GPUTarget) -> BaseBackend:
        native = _over_cuda()
        if native is not None:
            return native(target)
        return super().__new__(cls)

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)
        self.binary_ext = "acc"

    def hash(self) -> str:
        return f"acc-{self.target.arch}"

    def parse_options(self, options: dict) -> AccOptions:
        known = AccOptions.__dataclass_fields__
        return AccOptions(**{k: v for k, v in options.items() if k in known})

    def add_stages(self, stages: dict, options: object, language: object = None) -> None:
        raise RuntimeError(
            "The acc Triton backend compiles no machine code: acc runs Triton kernels "
            "through Triton's interpreter. Set TRITON_INTERPRET=1."
        )

    def load_dialects(self, context: object) -> None:
        pass

    def get_module_map(self) -> dict[str, ModuleType]:
        return {}

    def get_codegen_implementation(self, options: object) -> dict:
        return {}
