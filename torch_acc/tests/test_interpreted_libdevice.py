"""acc's libdevice under Triton's interpreter (``torch_acc._inductor.triton``).

Triton's interpreter has no libdevice. Each function acc's interpreted kernels
call as ``libdevice.<name>`` (:class:`InterpretedLibdevice`) is called by a
compiled op whose generated code names it, and the op matches the CPU; so do
the functions acc spells with ``tl.math`` in its overrides, GELU, pow and the
compiled optimizer steps. A libdevice function acc lacks fails by name.
"""

from __future__ import annotations

from typing import Any

import pytest

from rfc_shared.testing.helpers import last_json, run_python


pytest.importorskip("torch_acc")

ENV = {
    "TORCH_ACC_MODE": "gpu",
    "TRITON_INTERPRET": "1",
    # Kernels generated now, not ones a cache holds from other code.
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
}

# The checks themselves are the kit's, shared with the other backend's tests.
CHECKS = """
from rfc_shared.testing.libdevice_checks import main
main("acc", "torch_acc", "torch_acc._inductor.triton:InterpretedLibdevice")
"""

MISSING = """
import torch
import torch_acc

try:
    torch.compile(torch.lgamma)(torch.rand(8, device="acc") + 1)
except Exception as e:
    print(f"{type(e).__name__}: {e}")
"""


@pytest.fixture(scope="module")
def checks() -> dict[str, Any]:
    done = run_python(CHECKS, env=ENV)
    result = last_json(done)
    assert isinstance(result, dict)
    return result


def test_compiled_ops_calling_libdevice_match_the_cpu(checks: dict[str, Any]) -> None:
    wrong = {name: r for name, r in checks["results"].items() if not r.get("close")}
    assert not wrong, wrong


def test_each_interpreted_libdevice_function_is_called_by_a_check(checks: dict[str, Any]) -> None:
    called = {name for r in checks["results"].values() for name in r.get("calls", [])}
    assert set(checks["defined"]) <= called
    assert {"pow", "nearbyint", "expm1", "log1p", "tanh"} <= set(checks["defined"])


def test_a_libdevice_function_acc_lacks_fails_by_name() -> None:
    done = run_python(MISSING, env=ENV)
    assert done.stdout.strip().splitlines()[-1:] == [
        'InterpreterError: AttributeError("libdevice.lgamma is not in '
        "torch_acc._inductor.triton.InterpretedLibdevice, the libdevice of acc's kernels under "
        "Triton's interpreter: add a Triton function lgamma there, in tl.math\")"
    ]
