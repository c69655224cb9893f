"""max-autotune on acc: acc's choices are benchmarked on acc, and its Triton
GEMM templates get configs from the device type whose heuristics acc uses."""

from __future__ import annotations

import json
import re

import pytest
import torch

from rfc_shared.testing.helpers import last_json, run_python


torch_acc = pytest.importorskip("torch_acc")
from torch_acc.registration import heuristics_registry  # noqa: E402


# The heuristic alias is rfc3's (beyond the RFC).
needs_heuristic_alias = pytest.mark.skipif(
    not hasattr(heuristics_registry(), "register_heuristic_device_alias"),
    reason="needs rfc3's register_heuristic_device_alias()",
)


def init_inductor_backend() -> None:
    torch.compile(lambda t: t + 1)(torch.ones(2, device="acc"))


def test_autotuning_benchmarks_acc_choices_on_acc() -> None:
    from torch._inductor.runtime.benchmarking import benchmarker

    init_inductor_backend()
    x = torch.randn(32, 32, device="acc")
    # Without acc's benchmarker, a non-CPU device is timed with CUDA's events
    # and synchronization, which fail on a machine without CUDA.
    ms = benchmarker.benchmark(lambda: x @ x, device=torch.device("acc"))
    assert isinstance(ms, float) and 0 < ms < float("inf")


@needs_heuristic_alias
def test_acc_gemm_templates_use_the_heuristics_of_its_kernels_device() -> None:
    from torch._inductor.kernel.mm import mm_template

    registry = heuristics_registry()

    init_inductor_backend()
    # Without a GPU, acc's Triton kernels run on the host (Triton's
    # interpreter): it tunes them as Triton templates on the CPU are tuned.
    alias = registry.get_heuristic_device_alias("acc")
    assert alias == torch_acc.registration.heuristics_device_type() == "cpu"
    for op_name in ("mm", "addmm"):
        assert registry.get_registered_heuristic_class(
            mm_template.uid, "acc", op_name
        ) is registry.get_registered_heuristic_class(mm_template.uid, "cpu", op_name)


MAX_AUTOTUNE_GEMM = """
import json, torch, torch_acc
from unittest import mock
from torch._inductor.utils import run_and_get_code

torch.manual_seed(0)
a, b = torch.randn(64, 32), torch.randn(32, 48)
f = lambda a, b: (a @ b).relu()
# acc's host-memory devices report 8 SMs, too few for Inductor's GEMM
# templates (is_big_gpu); over CUDA memory they are the GPU's.
with mock.patch("torch._inductor.utils.is_big_gpu", return_value=True):
    compiled = torch.compile(
        f,
        # Benchmarking a template fused with its epilogue needs a compiled
        # launcher, which Triton's interpreter does not make.
        options={"max_autotune": True, "benchmark_epilogue_fusion": False},
    )
    out, (code,) = run_and_get_code(compiled, a.to("acc"), b.to("acc"))
print(json.dumps([str(out.device), torch.allclose(out.cpu(), f(a, b), atol=1e-4)]))
"""


@needs_heuristic_alias
def test_max_autotune_tunes_triton_gemm_templates_on_acc() -> None:
    done = run_python(
        MAX_AUTOTUNE_GEMM,
        env={"TRITON_INTERPRET": "1", "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"},
    )
    assert last_json(done) == ["acc:0", True]
    assert "No template heuristic found" not in done.stderr
    stats = re.search(r'^\{"num_choices".*\}$', done.stderr, re.M)
    assert stats is not None, done.stderr[-2000:]
    assert json.loads(stats.group(0))["num_triton_choices"] > 0
