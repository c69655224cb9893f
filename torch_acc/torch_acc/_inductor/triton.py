"""acc's Triton scheduling.

Without a GPU, acc runs Triton kernels through Triton's interpreter, which
implements ``tl.math`` but not libdevice (extern elementwise calls). Under
the interpreter acc's kernels therefore spell the libdevice functions Inductor
emits with ``tl.math`` or short identities. With a real Triton target the
kernels are Inductor's, unchanged.
"""

from __future__ import annotations

import os

from torch._inductor.codegen.triton import (
    TritonKernel,
    TritonKernelOverrides,
    TritonScheduling,
    maybe_upcast_float32,
)


def _unary(template: str) -> staticmethod:
    @maybe_upcast_float32()
    def op(x: object) -> str:
        return template.format(x=x)

    return staticmethod(op)


# libdevice function -> an expression the interpreter can evaluate.
INTERPRETER_MATH = {
    "exp": "tl_math.exp({x})",
    "exp2": "tl_math.exp2({x})",
    "expm1": "(tl_math.exp({x}) - 1)",
    "log": "tl_math.log({x})",
    "log2": "tl_math.log2({x})",
    "log10": "(tl_math.log({x}) * 0.4342944819032518)",
    "log1p": "tl_math.log(1 + {x})",
    "sqrt": "tl_math.sqrt({x})",
    "rsqrt": "tl_math.rsqrt({x})",
    "sin": "tl_math.sin({x})",
    "cos": "tl_math.cos({x})",
    "tanh": "(2 / (1 + tl_math.exp(-2 * {x})) - 1)",
    "erf": "tl_math.erf({x})",
    "floor": "tl_math.floor({x})",
    "ceil": "tl_math.ceil({x})",
}


class InterpretedTritonKernelOverrides(TritonKernelOverrides):
    locals().update({name: _unary(template) for name, template in INTERPRETER_MATH.items()})

    @staticmethod
    def isnan(x: object) -> str:
        return f"({x} != {x})"

    @staticmethod
    def isinf(x: object) -> str:
        return f"(tl_math.abs({x}) == float('inf'))"

    @staticmethod
    @maybe_upcast_float32()
    def pow(a: object, b: object) -> str:
        # Inductor expands constant integer powers; libdevice.pow is left for
        # others, such as Adam's bias corrections beta ** step. exp2(b * log2|a|),
        # negated for a negative base and an odd exponent (0 ** 0 is nan here,
        # a negative base with a fractional exponent is not).
        sign = f"tl.where(({a}) < 0, 1.0 - 2.0 * (({b}) % 2), 1.0)"
        return f"({sign} * tl_math.exp2(tl_math.log2(tl_math.abs({a})) * ({b})))"


class InterpretedTritonKernel(TritonKernel):
    overrides = InterpretedTritonKernelOverrides  # type: ignore[assignment]


class InterpretedTritonScheduling(TritonScheduling):
    kernel_type = InterpretedTritonKernel


def triton_scheduling() -> type[TritonScheduling]:
    """The scheduling acc registers: interpreter-safe math under TRITON_INTERPRET=1."""
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        return InterpretedTritonScheduling
    return TritonScheduling
