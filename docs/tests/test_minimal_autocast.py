"""Autocast on the guide's minimal backends (section 9): each op's dtype under
``torch.autocast`` on the device, eager and compiled, is the CPU's, for ops of
ATen's lower-precision list (float32 inputs become bfloat16) and of its float32
list (bfloat16 inputs become float32). The ops are ones whose policy the CPU's
lists and ATen's (CUDA's, which the device registers) agree on.

The examples are built as the guide's own tests build them, into the same folder.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest


LOWER_PRECISION = ["mm", "matmul", "linear", "addmm"]
FP32 = ["mse_loss", "l1_loss", "binary_cross_entropy_with_logits", "cdist"]

CHECK = """
import importlib, json, sys
import torch
import torch.nn.functional as F

importlib.import_module(sys.argv[1])
name = torch._C._get_privateuse1_backend_name()


def ops(a, b, t):
    return {
        "mm": torch.mm(a, b),
        "matmul": a @ b,
        "linear": F.linear(a, b.t()),
        "addmm": torch.addmm(a @ b, a, b),
        "mse_loss": F.mse_loss(t, t.flip(0)),
        "l1_loss": F.l1_loss(t, t.flip(0)),
        "binary_cross_entropy_with_logits": F.binary_cross_entropy_with_logits(t, t.sigmoid()),
        "cdist": torch.cdist(t, t),
    }


def dtypes(device, fn):
    a, b = torch.randn(4, 8, device=device), torch.randn(8, 4, device=device)
    t = torch.randn(4, 4, device=device, dtype=torch.bfloat16)
    with torch.autocast(device, dtype=torch.bfloat16):
        return {op: str(out.dtype) for op, out in fn(a, b, t).items()}


print(json.dumps({
    "cpu": dtypes("cpu", ops),
    "eager": dtypes(name, ops),
    "compiled": dtypes(name, torch.compile(ops)),
}))
"""


@pytest.fixture(scope="module")
def found(minimal: SimpleNamespace) -> dict[str, dict]:
    """package -> where ("cpu", "eager", "compiled") -> op -> dtype; the two
    backends in two processes side by side."""
    minimal.build()
    results = {}
    for package, (returncode, out, err) in minimal.side_by_side(
        {p: ["-c", CHECK, p] for p in ("minimal_host", "minimal_gpu")}
    ).items():
        assert returncode == 0, err[-3000:]
        results[package] = json.loads(out.strip().splitlines()[-1])
    return results


@pytest.mark.parametrize("package", ["minimal_host", "minimal_gpu"])
@pytest.mark.parametrize("where", ["eager", "compiled"])
def test_autocast_gives_each_op_the_cpus_dtype(found: dict, package: str, where: str) -> None:
    cpu = found[package]["cpu"]
    assert cpu == {
        **dict.fromkeys(LOWER_PRECISION, "torch.bfloat16"),
        **dict.fromkeys(FP32, "torch.float32"),
    }
    assert found[package][where] == cpu
