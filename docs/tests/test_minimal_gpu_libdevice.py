"""mgpu's libdevice under Triton's interpreter (``docs/examples/minimal_gpu_triton``).

Each function the module defines is called by a compiled op whose generated
code names it (``libdevice.<name>``), and the op matches the CPU; so do GELU,
pow and the compiled optimizer steps, whose kernels call libdevice. A libdevice
function the module lacks fails by name. The examples are built as the guide's
own tests build them (``test_backend_guide.py``), into the same folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest


# The checks themselves are the kit's, shared with the other backend's tests.
CHECKS = """
from rfc_shared.testing.libdevice_checks import main
main("mgpu", "minimal_gpu", "minimal_gpu_triton.libdevice")
"""

MISSING = r"""
import torch
import minimal_gpu

try:
    torch.compile(torch.lgamma)(torch.rand(8, device="mgpu") + 1)
except Exception as e:
    print(f"{type(e).__name__}: {e}")
"""


def run(minimal: SimpleNamespace, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with mgpu built, kernels interpreted, no compile cache."""
    minimal.build()
    # -P: the packages come from SITE, as built.
    return subprocess.run(
        [sys.executable, "-P", "-c", code],
        env=minimal.environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def checks(minimal: SimpleNamespace) -> dict[str, Any]:
    done = run(minimal, CHECKS)
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


def test_a_function_the_module_lacks_fails_by_name(minimal: SimpleNamespace) -> None:
    done = run(minimal, MISSING)
    assert done.stdout.strip().splitlines()[-1:] == [
        'InterpreterError: AttributeError("libdevice.lgamma is not in '
        "minimal_gpu_triton.libdevice, the libdevice of mgpu's kernels under Triton's interpreter: "
        'add a Triton function lgamma there, in tl.math")'
    ]
