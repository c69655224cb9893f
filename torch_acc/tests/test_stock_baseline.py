"""The "before" state, on record: what acc gets from stock torch 2.15.0.

Each scenario compiles the corpus in a fresh interpreter with the overlay off
(TORCH_RFC_SLICES=none) and asserts the first failure: its exception, message
and the torch function it came from. When a slice fixes a site, these tests
keep documenting stock torch; the slice's own tests and the conformance probe
show the fix.

The backport sessions run these on the older bases too, whose stock torch
fails earlier: the expectations that differ are keyed on the installed torch
release (TORCH_RELEASE) and say so.
"""

from __future__ import annotations

import json

import pytest
import torch

from rfc_shared.conformance.corpus import CORPUS
from rfc_shared.testing.helpers import run_python


# The installed torch release, (major, minor): stock 2.13 and 2.11 lack the
# _inductor_backend_init hook acc registers its Inductor backend through.
TORCH_RELEASE = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
BEFORE_2_15 = pytest.mark.skipif(
    TORCH_RELEASE < (2, 15), reason="records stock torch 2.15; see the test for older bases"
)


def compile_report(*args: str, mode: str = "gpu") -> list[dict]:
    done = run_python(
        f"import sys; sys.argv[1:] = {list(args)!r}\n"
        "from rfc_shared.conformance.compile_report import main; main()",
        slices="none",
        env={"TORCH_ACC_MODE": mode, "TRITON_INTERPRET": "1"},
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def first_failure(report: list[dict]) -> dict:
    return next(r for r in report if r["status"] == "fail")


def test_aot_eager_compiles_the_corpus_on_acc() -> None:
    report = compile_report("--backend", "aot_eager")
    assert [r["status"] for r in report] == ["ok"] * len(CORPUS)


@BEFORE_2_15
def test_gpu_mode_silently_computes_on_the_wrong_device() -> None:
    # Stock torch 2.15 registers acc's Inductor backend through the lazy hook
    # on acc's device module (torch.acc._inductor_backend_init) and compiles
    # acc's Triton kernels, but GPU_TYPES was scanned before acc registered its
    # DeviceInterface, so is_gpu("acc") is False and device_need_guard() emits
    # no device guard: acc:1's outputs are allocated on acc:0.
    report = compile_report("--backend", "inductor")
    assert [r["status"] for r in report[:-1]] == ["ok"] * (len(CORPUS) - 1)
    failure = first_failure(report)
    assert failure["case"] == "second_device"
    assert failure["error"] == "AssertionError"
    assert failure["message"] == "second_device: output on acc:0, expected acc:1"


@BEFORE_2_15
def test_host_mode_fails_in_the_wrapper_codegen() -> None:
    failure = first_failure(compile_report("--backend", "inductor", "--cases", "mlp", mode="host"))
    assert failure["error"] == "InductorError"
    assert failure["message"] == "RuntimeError: device acc nyi"
    assert failure["site"] == "torch/_inductor/codegen/wrapper.py:_generate_kernel_call_helper"


# Stock torch before 2.15 has no _inductor_backend_init hook (2.15's
# init_backend_registration() calls it): nothing registers acc's Inductor
# backend, so no case compiles in either mode. The first one fails where
# Inductor first needs acc's registrations.
FIRST_FAILURE_BEFORE_2_15 = {
    (2, 13): ("KeyError: 'acc'", "torch/_inductor/codegen/common.py:get_device_op_overrides"),
    (2, 11): (
        "AssertionError: Device acc not supported",
        "torch/_inductor/graph.py:init_wrapper_code",
    ),
}


@pytest.mark.skipif(TORCH_RELEASE >= (2, 15), reason="stock torch 2.15 has the hook")
@pytest.mark.parametrize("mode", ["gpu", "host"])
def test_before_2_15_nothing_registers_accs_inductor_backend(mode: str) -> None:
    report = compile_report("--backend", "inductor", mode=mode)
    assert [r["status"] for r in report] == ["fail"] * len(CORPUS)
    failure = first_failure(report)
    assert failure["case"] == "mlp"
    assert failure["error"] == "InductorError"
    assert (failure["message"], failure["site"]) == FIRST_FAILURE_BEFORE_2_15[TORCH_RELEASE]
