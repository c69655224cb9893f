import hashlib
from dataclasses import dataclass

from triton.backends.compiler import BaseBackend, GPUTarget


@dataclass(frozen=True)
class MgpuOptions:
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 1
    warp_size: int = 32
    debug: bool = False
    sanitize_overflow: bool = False
    arch: object = None
    backend_name: str = "mgpu"
    allowed_dot_input_precisions: tuple = ("ieee",)
    default_dot_input_precision: str = "ieee"
    max_num_imprecise_acc_default: int = 0
    enable_fp_fusion: bool = True
    extern_libs: object = None
    instrumentation_mode: str = ""

    def hash(self) -> str:
        return hashlib.sha256(repr(self).encode()).hexdigest()


class MgpuBackend(BaseBackend):
    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "mgpu"

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)
        self.binary_ext = "mgpu"

    def hash(self) -> str:
        return f"mgpu-{self.target.arch}"

    def parse_options(self, options: dict) -> MgpuOptions:
        fields = MgpuOptions.__dataclass_fields__
        return MgpuOptions(**{k: v for k, v in options.items() if k in fields})

    def add_stages(self, stages, options, language=None) -> None:
        # A vendor's compiler lowers Triton's IR to its machine code here.
        raise RuntimeError("mgpu compiles no machine code: set TRITON_INTERPRET=1")

    def load_dialects(self, context) -> None:
        pass

    def get_module_map(self) -> dict:
        return {}

    def get_codegen_implementation(self, options) -> dict:
        return {}
