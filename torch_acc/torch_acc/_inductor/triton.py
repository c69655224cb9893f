"""acc's Triton scheduling.

Without a GPU, acc runs Triton kernels through Triton's interpreter, which
implements ``tl.math`` but not libdevice (extern elementwise calls): its
libdevice functions are stubs that return None. Under the interpreter acc's
kernels therefore spell the libdevice functions Inductor emits with ``tl.math``
where it has them, and call :data:`INTERPRETED_LIBDEVICE` as ``libdevice`` for
the rest. With a real Triton target the kernels are Inductor's, unchanged.
"""

from __future__ import annotations

import os
from typing import NoReturn

import triton
import triton.language as tl
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


# libdevice function -> its tl.math spelling.
INTERPRETER_MATH = {
    "exp": "tl_math.exp({x})",
    "exp2": "tl_math.exp2({x})",
    "log": "tl_math.log({x})",
    "log2": "tl_math.log2({x})",
    "log10": "(tl_math.log({x}) * 0.4342944819032518)",
    "sqrt": "tl_math.sqrt({x})",
    "rsqrt": "tl_math.rsqrt({x})",
    "sin": "tl_math.sin({x})",
    "cos": "tl_math.cos({x})",
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


# The libdevice functions tl.math lacks, as Triton functions: Inductor's
# overrides call them as libdevice.<name>, and so does Inductor itself, past
# the overrides, for float64 exp, sqrt, sin, cos and log.


@triton.jit
def _expm1(x):
    # exp(x) - 1 loses x's digits when x is small; (u - 1) * x / log(u), with
    # u = exp(x), restores them (Kahan). u == 1 leaves x, u == 0 leaves -1.
    u = tl.math.exp(x)
    um1 = u - 1.0
    plain = (u == 1.0) | (um1 == -1.0) | (u == float("inf"))
    y = um1 * (x / tl.math.log(tl.where(plain, 2.0, u)))
    return tl.where(u == 1.0, x, tl.where(um1 == -1.0, um1, y))


@triton.jit
def _log1p(x):
    # log(1 + x) loses x's digits in 1 + x when x is small; log(u) * x / (u - 1),
    # with u = 1 + x, restores them (Kahan). u == 1 leaves x.
    u = 1.0 + x
    plain = (u == 1.0) | (u == float("inf"))
    y = tl.math.log(u) * (x / tl.where(plain, 1.0, u - 1.0))
    return tl.where(u == 1.0, x, tl.where(u == float("inf"), u, y))


@triton.jit
def _tanh(x):
    # With e = expm1(-2|x|): tanh|x| = -e / (2 + e), exact near 0 and 1 for large |x|.
    e = _expm1(-2.0 * tl.abs(x))
    t = -e / (2.0 + e)
    return tl.where(x < 0, -t, tl.where(x == 0.0, x, t))


@triton.jit
def _trunc(x):
    return tl.where(x < 0, tl.math.ceil(x), tl.math.floor(x))


@triton.jit
def _nearbyint(x):
    # Halves to even, as torch.round; a zero result keeps x's sign.
    f = tl.math.floor(x)
    whole = f == x  # integral or infinite: x itself
    d = tl.where(whole, 0.0, x) - tl.where(whole, 0.0, f)
    odd = tl.math.floor(f * 0.5) * 2.0 != f
    r = tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)
    signed_zero = tl.where(r == 0.0, x, 1.0) * 0.0  # x * 0.0 of the (finite) x that round to 0
    return tl.where(r == 0.0, signed_zero, r)


@triton.jit
def _signbit(x):
    # The sign bit, -0.0's included: float64 keeps it.
    return x.to(tl.float64).to(tl.int64, bitcast=True) < 0


@triton.jit
def _fmod(x, y):
    return x % y  # Triton's % of floats is C's fmod


@triton.jit
def _pow(x, y):
    # C's pow, as torch's: |x| ** y as exp2(y * log2|x|) in float64; a negative
    # base gives an odd integral exponent's power its sign, and a finite one
    # makes any other exponent's power nan. x ** 0 and 1 ** y are 1, nan included.
    # x and y have one dtype; one may be a float kernel argument, which the
    # interpreter passes as a Python float.
    like = tl.where(True, x, y)
    # Broadcast before comparing: the interpreter broadcasts a boolean scalar
    # to a block of floats, which & then refuses.
    xd, yd = tl.broadcast(tl.cast(x, tl.float64), tl.cast(y, tl.float64))
    ax = tl.abs(xd)
    zero = ax == 0.0
    lg = tl.math.log2(tl.where(zero, 1.0, ax))
    # The product without 0 * inf: a zero factor makes the exponent 0.
    t = tl.where(lg == 0.0, 0.0, yd) * tl.where(yd == 0.0, 0.0, lg)
    # 0 ** y: 0 for y > 0, inf for y < 0, 1 for y == 0, nan for nan.
    zero_base = tl.where(yd > 0, 0.0, tl.where(yd < 0, float("inf"), tl.where(yd == 0, 1.0, yd)))
    m = tl.where(zero, zero_base, tl.math.exp2(t))
    integral = tl.math.floor(yd) == yd
    odd = integral & (tl.math.floor(yd * 0.5) * 2.0 != yd)
    negative = xd.to(tl.int64, bitcast=True) < 0  # the sign bit: -0.0 too
    r = tl.where(negative & odd, -m, m)
    r = tl.where((xd < 0) & (ax != float("inf")) & ~integral, float("nan"), r)
    return r.to(like.dtype)


@triton.jit
def _exp(x):
    return tl.math.exp(x)


@triton.jit
def _sqrt(x):
    return tl.math.sqrt(x)


@triton.jit
def _sin(x):
    return tl.math.sin(x)


@triton.jit
def _cos(x):
    return tl.math.cos(x)


@triton.jit
def _log(x):
    return tl.math.log(x)


class InterpretedLibdevice:
    """What ``libdevice`` is in acc's interpreted kernels."""

    expm1 = _expm1
    log1p = _log1p
    tanh = _tanh
    trunc = _trunc
    nearbyint = _nearbyint
    pow = _pow
    signbit = _signbit
    fmod = _fmod
    exp = _exp
    sqrt = _sqrt
    sin = _sin
    cos = _cos
    log = _log

    def __getattr__(self, name: str) -> NoReturn:
        # The kernel looked up libdevice.<name>, which neither spells.
        raise AttributeError(
            f"libdevice.{name} is not in {__name__}.InterpretedLibdevice, the libdevice "
            f"of acc's kernels under Triton's interpreter: add a Triton function {name} "
            "there, in tl.math"
        )


INTERPRETED_LIBDEVICE = InterpretedLibdevice()


class InterpretedTritonKernel(TritonKernel):
    overrides = InterpretedTritonKernelOverrides  # type: ignore[assignment]

    @classmethod
    def gen_common_triton_imports(cls) -> str:
        # After Inductor's imports, whose libdevice it replaces.
        imports = super().gen_common_triton_imports()
        return f"{imports}\nfrom {__name__} import INTERPRETED_LIBDEVICE as libdevice\n"


class InterpretedTritonScheduling(TritonScheduling):
    kernel_type = InterpretedTritonKernel


def triton_scheduling() -> type[TritonScheduling]:
    """The scheduling acc registers: interpreter-safe math under TRITON_INTERPRET=1."""
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        return InterpretedTritonScheduling
    return TritonScheduling
