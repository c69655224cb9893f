"""The helpers tests use to run code in a fresh interpreter."""

from pathlib import Path

import pytest

from rfc_shared.testing.helpers import run_python


def test_a_child_killed_by_a_signal_reports_how_far_it_got_and_where_it_was() -> None:
    code = """
        import os, sys, threading

        def waiting():
            threading.Event().wait()

        threading.Thread(target=waiting, name="Waiter", daemon=True).start()
        print("the result", flush=True)
        os.abort()
    """
    with pytest.raises(AssertionError) as failed:
        run_python(code, slices="none")
    report = str(failed.value)
    assert "killed by SIGABRT" in report
    # The child printed its result before it died: a crash at exit, not mid-run.
    assert "stdout, last lines:\nthe result" in report
    # faulthandler names every thread's stack, the one that aborted included.
    assert "Fatal Python error: Aborted" in report
    assert "in waiting" in report


def test_a_child_that_exits_with_an_error_reports_its_status_and_its_stderr() -> None:
    with pytest.raises(AssertionError) as failed:
        run_python("import sys; sys.exit('no device')", slices="none")
    report = str(failed.value)
    assert "exit status 1" in report
    assert "stdout, last lines:\n(nothing)" in report
    assert report.endswith("no device\n")


def test_a_backend_named_with_a_digit_is_explained(tmp_path: Path) -> None:
    # rename_privateuse1_backend() takes "npu3"; registering its device module
    # then fails with "Invalid device string", which says nothing of the rule.
    (tmp_path / "torch_npu3.py").write_text(
        "import torch, types\n"
        "torch.utils.rename_privateuse1_backend('npu3')\n"
        "torch._register_device_module('npu3', types.ModuleType('npu3'))\n"
    )
    done = run_python(
        """
        from rfc_shared.conformance.backend import BackendNameError, ensure_privateuse1_backend
        try:
            ensure_privateuse1_backend("torch_npu3")
        except BackendNameError as e:
            print(e)
        """,
        slices="none",
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert "'npu3', which no torch.device accepts" in done.stdout
    assert "letters and underscores" in done.stdout
