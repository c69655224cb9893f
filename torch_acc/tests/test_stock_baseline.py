"""The "before" state, on record: what acc gets from stock torch 2.13.0.

Each scenario compiles the corpus in a fresh interpreter with the overlay off
(TORCH_RFC_SLICES=none) and asserts the first failure: its exception, message
and the torch function it came from. When a slice fixes a site, these tests
keep documenting stock torch; the slice's own tests and the conformance probe
show the fix.
"""

from __future__ import annotations

import json

import pytest

from rfc_shared.testing.corpus import CORPUS
from rfc_shared.testing.helpers import run_python


def compile_report(*args: str, mode: str = "gpu") -> list[dict]:
    done = run_python(
        f"import sys; sys.argv[1:] = {list(args)!r}\n"
        "from rfc_shared.testing.compile_report import main; main()",
        slices="none",
        env={"TORCH_ACC_MODE": mode, "TRITON_INTERPRET": "1"},
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def first_failure(report: list[dict]) -> dict:
    return next(r for r in report if r["status"] == "fail")


def test_aot_eager_compiles_the_corpus_on_acc() -> None:
    report = compile_report("--backend", "aot_eager")
    assert [r["status"] for r in report] == ["ok"] * len(CORPUS)


@pytest.mark.parametrize("mode", ["gpu", "host"])
def test_inductor_without_registration_fails_at_the_op_overrides(mode: str) -> None:
    # acc ships its DeviceInterface by convention and an Inductor entry point;
    # stock torch looks at neither.
    failure = first_failure(compile_report("--backend", "inductor", "--cases", "mlp", mode=mode))
    assert failure["error"] == "InductorError"
    assert failure["message"] == "KeyError: 'acc'"
    assert failure["site"] == "torch/_inductor/codegen/common.py:get_device_op_overrides"


def test_gpu_mode_registered_by_hand_silently_computes_on_the_wrong_device() -> None:
    # With every public registration made by hand, stock Inductor compiles
    # acc's Triton kernels, but is_gpu("acc") is False, so device_need_guard()
    # emits no device guard: acc:1's outputs are allocated on acc:0.
    report = compile_report(
        "--backend", "inductor", "--setup", "torch_acc.registration:register_inductor_backend"
    )
    assert [r["status"] for r in report[:-1]] == ["ok"] * (len(CORPUS) - 1)
    failure = first_failure(report)
    assert failure["case"] == "second_device"
    assert failure["error"] == "AssertionError"
    assert failure["message"] == "second_device: output on acc:0, expected acc:1"


def test_host_mode_registered_by_hand_fails_in_the_wrapper_codegen() -> None:
    failure = first_failure(
        compile_report(
            "--backend",
            "inductor",
            "--setup",
            "torch_acc.registration:register_inductor_backend",
            "--cases",
            "mlp",
            mode="host",
        )
    )
    assert failure["error"] == "InductorError"
    assert failure["message"] == "RuntimeError: device acc nyi"
    assert failure["site"] == "torch/_inductor/codegen/wrapper.py:_generate_kernel_call_helper"
