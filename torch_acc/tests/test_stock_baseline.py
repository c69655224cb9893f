"""The "before" state, on record: what acc gets from stock torch 2.15.0.

Each scenario compiles the corpus in a fresh interpreter with the overlay off
(TORCH_RFC_SLICES=none) and asserts the first failure: its exception, message
and the torch function it came from. When a slice fixes a site, these tests
keep documenting stock torch; the slice's own tests and the conformance probe
show the fix.
"""

from __future__ import annotations

import json

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


def test_host_mode_fails_in_the_wrapper_codegen() -> None:
    failure = first_failure(compile_report("--backend", "inductor", "--cases", "mlp", mode="host"))
    assert failure["error"] == "InductorError"
    assert failure["message"] == "RuntimeError: device acc nyi"
    assert failure["site"] == "torch/_inductor/codegen/wrapper.py:_generate_kernel_call_helper"
