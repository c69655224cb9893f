"""The libdevice mgpu's kernels call under Triton's interpreter.

Inductor's Triton kernels call libdevice (``libdevice.erf(x)``), and the
interpreter has none: its ``libdevice`` functions are stubs that return None,
and a kernel fails on that None with an error that never names libdevice.
Under the interpreter mgpu's kernels import this module as ``libdevice``
(``minimal_gpu/inductor.py``): the functions Inductor calls, as Triton
functions of ``tl.math`` and arithmetic. A function missing here fails by name.
"""

from typing import NoReturn

import triton
import triton.language as tl


@triton.jit
def exp(x):
    return tl.math.exp(x)


@triton.jit
def exp2(x):
    return tl.math.exp2(x)


@triton.jit
def expm1(x):
    # exp(x) - 1 loses x's digits when x is small; (u - 1) * x / log(u), with
    # u = exp(x), restores them (Kahan). u == 1 leaves x, u == 0 leaves -1.
    u = tl.math.exp(x)
    um1 = u - 1.0
    plain = (u == 1.0) | (um1 == -1.0) | (u == float("inf"))
    y = um1 * (x / tl.math.log(tl.where(plain, 2.0, u)))
    return tl.where(u == 1.0, x, tl.where(um1 == -1.0, um1, y))


@triton.jit
def log(x):
    return tl.math.log(x)


@triton.jit
def log1p(x):
    # log(1 + x) loses x's digits in 1 + x when x is small; log(u) * x / (u - 1),
    # with u = 1 + x, restores them (Kahan). u == 1 leaves x.
    u = 1.0 + x
    plain = (u == 1.0) | (u == float("inf"))
    y = tl.math.log(u) * (x / tl.where(plain, 1.0, u - 1.0))
    return tl.where(u == 1.0, x, tl.where(u == float("inf"), u, y))


@triton.jit
def sqrt(x):
    return tl.math.sqrt(x)


@triton.jit
def rsqrt(x):
    return tl.math.rsqrt(x)


@triton.jit
def sin(x):
    return tl.math.sin(x)


@triton.jit
def cos(x):
    return tl.math.cos(x)


@triton.jit
def tanh(x):
    # With e = expm1(-2|x|): tanh|x| = -e / (2 + e), exact near 0 and 1 for large |x|.
    e = expm1(-2.0 * tl.abs(x))
    t = -e / (2.0 + e)
    return tl.where(x < 0, -t, tl.where(x == 0.0, x, t))


@triton.jit
def erf(x):
    return tl.math.erf(x)


@triton.jit
def floor(x):
    return tl.math.floor(x)


@triton.jit
def ceil(x):
    return tl.math.ceil(x)


@triton.jit
def trunc(x):
    return tl.where(x < 0, tl.math.ceil(x), tl.math.floor(x))


@triton.jit
def nearbyint(x):
    # Halves to even, as torch.round; a zero result keeps x's sign.
    f = tl.math.floor(x)
    whole = f == x  # integral or infinite: x itself
    d = tl.where(whole, 0.0, x) - tl.where(whole, 0.0, f)
    odd = tl.math.floor(f * 0.5) * 2.0 != f
    r = tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)
    signed_zero = tl.where(r == 0.0, x, 1.0) * 0.0  # x * 0.0 of the (finite) x that round to 0
    return tl.where(r == 0.0, signed_zero, r)


@triton.jit
def isnan(x):
    return x != x


@triton.jit
def isinf(x):
    return tl.abs(x) == float("inf")


@triton.jit
def signbit(x):
    # The sign bit, -0.0's included: float64 keeps it.
    return x.to(tl.float64).to(tl.int64, bitcast=True) < 0


@triton.jit
def fmod(x, y):
    return x % y  # Triton's % of floats is C's fmod


@triton.jit
def pow(x, y):
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


def __getattr__(name: str) -> NoReturn:
    # A kernel looked up libdevice.<name>, a function this module lacks.
    raise AttributeError(
        f"libdevice.{name} is not in {__name__}, the libdevice of mgpu's kernels under "
        f"Triton's interpreter: add a Triton function {name} there, in tl.math"
    )
