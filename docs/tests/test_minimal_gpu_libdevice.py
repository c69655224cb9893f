"""mgpu's libdevice under Triton's interpreter (``docs/examples/minimal_gpu_triton``).

Each function the module defines is called by a compiled op whose generated
code names it (``libdevice.<name>``), and the op matches the CPU; so do GELU,
pow and the compiled optimizer steps, whose kernels call libdevice. A libdevice
function the module lacks fails by name. The examples are built as the guide's
own tests build them (``test_backend_guide.py``), into the same folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


DOCS = Path(__file__).resolve().parents[1]
EXAMPLES = DOCS / "examples"
SITE = DOCS / "_build" / "examples"

CHECKS = r"""
import json
import re

import torch
import torch.nn.functional as F
import triton
from torch._inductor.utils import run_and_get_code

import minimal_gpu

special = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 1e-12, -1e-12, 1e-7, -1e-7, 60.0, -60.0, 100.0,
           -100.0, float("inf"), -float("inf"), float("nan")]
torch.manual_seed(0)
normal = torch.randn(96) * 3
x = torch.cat([normal, torch.tensor(special)])
# Bases and exponents: negative bases with integral and fractional exponents,
# zeros of either sign, infinities and nan on both sides.
base = torch.tensor([-2.0, -2.0, -2.0, -2.0, -0.5, -0.0, -0.0, -0.0, 0.0, 0.0, 0.0, 1.0, -1.0,
                     -1.0, float("inf"), -float("inf"), -float("inf"), float("nan"), 0.999, 10.0,
                     3.0, 0.7])
expo = torch.tensor([3.0, -3.0, 2.0, 0.5, -1.0, 3.0, -3.0, 0.5, -2.0, 0.0, 2.5, float("nan"),
                     float("inf"), 3.0, -1.0, 3.0, 0.5, 0.0, 1000.0, 30.0, -30.0, 1 / 3])


def same(got, want, rtol, atol):
    got = got.cpu()
    if got.dtype != want.dtype:
        return False
    if got.dtype == torch.bool:
        return torch.equal(got, want)
    return torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


# One function: within an ulp or two of the CPU's, however small the result.
EXACT = {"rtol": 1e-6, "atol": 0.0}
FLOAT64 = {"rtol": 1e-12, "atol": 0.0}
# Several, in another order than the CPU's: float32 rounding.
FLOAT32 = {"rtol": 1e-5, "atol": 1e-5}


def compiled(fn, *args, tolerance=EXACT):
    torch._dynamo.reset()
    got, code = run_and_get_code(torch.compile(fn), *[a.to("mgpu") for a in args])
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
    dev = [p.detach().to("mgpu").requires_grad_() for p in cpu]
    on_cpu, on_dev = make(cpu, **options), make(dev, **options, **device_options)
    step, code = torch.compile(on_dev.step), []
    for _ in range(3):
        for p, q in zip(cpu, dev):
            p.grad = torch.randn_like(p)
            q.grad = p.grad.to("mgpu")
        on_cpu.step()
        code += run_and_get_code(step)[1]
    return all(same(q.detach(), p.detach(), **FLOAT32) for p, q in zip(cpu, dev)), code


def fp64(fn):
    return lambda t: fn(t.double())


checks = {
    "exp": lambda: compiled(torch.exp, x.clamp(max=80)),
    "exp2": lambda: compiled(lambda t: 2.0 ** t, x),
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
    "tensor ** negative scalar": lambda: compiled(lambda t: t ** -1.5, x),
    "tensor ** tensor": lambda: compiled(lambda a, b: a ** b, normal, normal.round()),
    "remainder": lambda: compiled(lambda t: torch.remainder(t, -0.75), x),
}
for foreach in (True, False):
    checks[f"SGD momentum, foreach={foreach}"] = lambda f=foreach: optimizer(
        torch.optim.SGD, {}, lr=0.1, momentum=0.9, foreach=f
    )
    # Without foreach, the step count stays on the CPU unless capturable
    # (the guide's section 10).
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
try:
    from minimal_gpu_triton import libdevice
except ImportError:  # a build without mgpu's libdevice
    defined = []
else:
    defined = sorted(
        n for n, v in vars(libdevice).items() if isinstance(v, triton.runtime.KernelInterface)
    )
print(json.dumps({"defined": defined, "results": results}))
"""

MISSING = r"""
import torch
import minimal_gpu

try:
    torch.compile(torch.lgamma)(torch.rand(8, device="mgpu") + 1)
except Exception as e:
    print(f"{type(e).__name__}: {e}")
"""


def run(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with mgpu built, kernels interpreted, no compile cache."""
    subprocess.run([sys.executable, EXAMPLES / "install.py", SITE], check=True)
    env = {k: v for k, v in os.environ.items() if k != "TORCH_RFC_BACKEND"}
    env.update(PYTHONPATH=str(SITE), TRITON_INTERPRET="1", TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    # -P: the packages come from SITE, as built.
    return subprocess.run(
        [sys.executable, "-P", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def checks() -> dict[str, Any]:
    done = run(CHECKS)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_compiled_ops_calling_libdevice_match_the_cpu(checks: dict[str, Any]) -> None:
    results = checks["results"]
    wrong = {name: r for name, r in results.items() if not r.get("close")}
    assert not wrong, json.dumps(wrong, indent=1)


def test_each_function_of_the_module_is_called_by_a_check(checks: dict[str, Any]) -> None:
    called = {name for r in checks["results"].values() for name in r.get("calls", [])}
    assert set(checks["defined"]) <= called
    assert {"erf", "tanh", "pow", "exp", "exp2", "rsqrt"} <= set(checks["defined"])


def test_a_function_the_module_lacks_fails_by_name() -> None:
    done = run(MISSING)
    assert done.stdout.strip().splitlines()[-1:] == [
        'InterpreterError: AttributeError("libdevice.lgamma is not in '
        "minimal_gpu_triton.libdevice, the libdevice of mgpu's kernels under Triton's interpreter: "
        'add a Triton function lgamma there, in tl.math")'
    ]
