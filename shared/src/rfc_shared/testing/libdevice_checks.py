"""Compiled ops whose Triton kernels call libdevice, checked against the CPU
on a backend whose kernels run in Triton's interpreter (which has no
libdevice, so the backend supplies one).

``python -m rfc_shared.testing.libdevice_checks DEVICE BACKEND LIBDEVICE``,
in a process with ``TRITON_INTERPRET=1``: each function the backend's
libdevice defines, GELU, pow and the compiled optimizer steps, on DEVICE,
against the CPU; prints JSON. The minimal GPU example's tests and acc's run it.
"""

from __future__ import annotations

import importlib
import json
import re
import sys

import torch
import torch.nn.functional as F
import triton
from torch._inductor.utils import run_and_get_code


def main(device: str, backend: str, libdevice: str) -> None:
    """Runs every check on ``device`` after importing the ``backend`` package,
    and prints, as JSON, each check's outcome with the libdevice functions its
    kernels called, and the functions ``libdevice`` (``module`` or
    ``module:attribute``) defines."""
    importlib.import_module(backend)
    special = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -2.5,
        1e-12,
        -1e-12,
        1e-7,
        -1e-7,
        60.0,
        -60.0,
        100.0,
        -100.0,
        float("inf"),
        -float("inf"),
        float("nan"),
    ]
    torch.manual_seed(0)
    normal = torch.randn(96) * 3
    x = torch.cat([normal, torch.tensor(special)])
    # Bases and exponents: negative bases with integral and fractional exponents,
    # zeros of either sign, infinities and nan on both sides.
    base = torch.tensor(
        [
            -2.0,
            -2.0,
            -2.0,
            -2.0,
            -0.5,
            -0.0,
            -0.0,
            -0.0,
            0.0,
            0.0,
            0.0,
            1.0,
            -1.0,
            -1.0,
            float("inf"),
            -float("inf"),
            -float("inf"),
            float("nan"),
            0.999,
            10.0,
            3.0,
            0.7,
        ]
    )
    expo = torch.tensor(
        [
            3.0,
            -3.0,
            2.0,
            0.5,
            -1.0,
            3.0,
            -3.0,
            0.5,
            -2.0,
            0.0,
            2.5,
            float("nan"),
            float("inf"),
            3.0,
            -1.0,
            3.0,
            0.5,
            0.0,
            1000.0,
            30.0,
            -30.0,
            1 / 3,
        ]
    )
    # One function: within an ulp or two of the CPU's, however small the result.
    EXACT = {"rtol": 1e-6, "atol": 0.0}
    FLOAT64 = {"rtol": 1e-12, "atol": 0.0}
    # Several, in another order than the CPU's: float32 rounding.
    FLOAT32 = {"rtol": 1e-5, "atol": 1e-5}

    def same(got, want, rtol, atol):
        got = got.cpu()
        if got.dtype != want.dtype:
            return False
        if got.dtype == torch.bool:
            return torch.equal(got, want)
        return torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)

    def compiled(fn, *args, tolerance=EXACT):
        torch._dynamo.reset()
        got, code = run_and_get_code(torch.compile(fn), *[a.to(device) for a in args])
        return same(got, fn(*args), **tolerance), code

    def backward(fn, t):
        def grad(t):
            t = t.detach().requires_grad_()
            fn(t).sum().backward()
            return t.grad

        return compiled(grad, t, tolerance=FLOAT32)

    def optimizer(make, device_options, **options):
        torch._dynamo.reset()
        torch.manual_seed(0)
        cpu = [torch.randn(8, 4, requires_grad=True), torch.randn(8, requires_grad=True)]
        dev = [p.detach().to(device).requires_grad_() for p in cpu]
        on_cpu, on_dev = make(cpu, **options), make(dev, **options, **device_options)
        step, code = torch.compile(on_dev.step), []
        for _ in range(3):
            for p, q in zip(cpu, dev, strict=True):
                p.grad = torch.randn_like(p)
                q.grad = p.grad.to(device)
            on_cpu.step()
            code += run_and_get_code(step)[1]
        return all(
            same(q.detach(), p.detach(), **FLOAT32) for p, q in zip(cpu, dev, strict=True)
        ), code

    def fp64(fn):
        return lambda t: fn(t.double())

    checks = {
        "exp": lambda: compiled(torch.exp, x.clamp(max=80)),
        "exp2": lambda: compiled(lambda t: 2.0**t, x),
        "expm1": lambda: compiled(torch.expm1, x),
        "log1p": lambda: compiled(torch.log1p, x),
        "tanh": lambda: compiled(torch.tanh, x),
        "erf": lambda: compiled(torch.erf, x),
        "rsqrt": lambda: compiled(torch.rsqrt, x.abs()),
        "floor": lambda: compiled(torch.floor, x),
        "ceil": lambda: compiled(torch.ceil, x),
        "trunc": lambda: compiled(torch.trunc, x),
        "round": lambda: compiled(torch.round, x),
        "isnan": lambda: compiled(torch.isnan, x),
        "isinf": lambda: compiled(torch.isinf, x),
        "signbit": lambda: compiled(torch.signbit, x),
        "fmod": lambda: compiled(lambda t: torch.fmod(t, 0.75), x),
        "pow": lambda: compiled(torch.pow, base, expo),
        "float64 exp": lambda: compiled(fp64(torch.exp), x, tolerance=FLOAT64),
        "float64 log": lambda: compiled(fp64(torch.log), x, tolerance=FLOAT64),
        "float64 sqrt": lambda: compiled(fp64(torch.sqrt), x, tolerance=FLOAT64),
        "float64 sin": lambda: compiled(fp64(torch.sin), x, tolerance=FLOAT64),
        "float64 cos": lambda: compiled(fp64(torch.cos), x, tolerance=FLOAT64),
        "softmax": lambda: compiled(lambda t: t.view(4, 24).softmax(-1), normal, tolerance=FLOAT32),
        "gelu": lambda: compiled(F.gelu, normal, tolerance=FLOAT32),
        "gelu tanh": lambda: compiled(
            lambda t: F.gelu(t, approximate="tanh"), normal, tolerance=FLOAT32
        ),
        "gelu backward": lambda: backward(F.gelu, normal),
        "gelu tanh backward": lambda: backward(lambda t: F.gelu(t, approximate="tanh"), normal),
        "tensor ** scalar": lambda: compiled(lambda t: t.abs() ** 2.5, x),
        "tensor ** negative scalar": lambda: compiled(lambda t: t**-1.5, x),
        "tensor ** tensor": lambda: compiled(lambda a, b: a**b, normal, normal.round()),
        "remainder": lambda: compiled(lambda t: torch.remainder(t, -0.75), x),
    }
    for foreach in (True, False):
        checks[f"SGD momentum, foreach={foreach}"] = lambda f=foreach: optimizer(
            torch.optim.SGD, {}, lr=0.1, momentum=0.9, foreach=f
        )
        # Without foreach, the step count stays on the CPU unless capturable:
        # Dynamo makes it capturable for cuda and xpu parameters only.
        for make in (torch.optim.Adam, torch.optim.AdamW):
            checks[f"{make.__name__}, foreach={foreach}"] = lambda m=make, f=foreach: optimizer(
                m, {} if f else {"capturable": True}, lr=0.1, foreach=f
            )

    results = {}
    for name, check in checks.items():
        try:
            close, code = check()
            calls = {n for c in code for n in re.findall(r"libdevice\.(\w+)", c)}
            results[name] = {"close": close, "calls": sorted(calls)}
        except Exception as e:
            results[name] = {"error": f"{type(e).__name__}: {e}"}
    namespace_module, _, attribute = libdevice.partition(":")
    namespace = importlib.import_module(namespace_module)
    if attribute:
        namespace = getattr(namespace, attribute)
    defined = sorted(
        n for n, v in vars(namespace).items() if isinstance(v, triton.runtime.KernelInterface)
    )
    print(json.dumps({"defined": defined, "results": results}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
