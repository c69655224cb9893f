"""The pytest plugin every slice's tests run under."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rfc_shared import selection
from rfc_shared.conformance.backend import ENV_BACKEND


# Opt-in: a pytest run outside the project loads it only when asked.
PLUGIN = ("-p", "rfc_shared.testing.plugin")


MARKED = """
    import pytest

    @pytest.mark.slice("registry_core")
    def test_passes_without_the_slice():
        pass

    @pytest.mark.slice("registry_core")
    def test_needs_the_slice():
        import torch._dynamo.device_interface as di
        assert hasattr(di, "register_interface_for_device_PrivateUse1")

    def test_unmarked():
        pass
"""


def test_control_fails_a_slice_test_that_passes_on_stock_torch(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(selection.ENV, "none")
    pytester.makepyfile(MARKED)
    result = pytester.runpytest_subprocess(*PLUGIN, "--control", "-rA")
    result.assert_outcomes(failed=1, xfailed=1, deselected=1)
    result.stdout.fnmatch_lines(
        ["*passed on stock torch: it does not exercise slice 'registry_core'*"]
    )


def test_control_refuses_to_run_on_an_overlaid_torch(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(selection.ENV, "registry_core")
    pytester.makepyfile(MARKED)
    result = pytester.runpytest_subprocess(*PLUGIN, "--control")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--control runs on stock torch*"])


def test_a_slice_test_fails_when_its_slice_is_not_active(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(selection.ENV, "none")
    pytester.makepyfile(MARKED)
    result = pytester.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        ["*this test needs slice 'registry_core'; the overlay serves stock torch*"]
    )


def test_each_test_gets_the_registry_and_a_cache_dir_of_its_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(selection.ENV, "registry_core")
    pytester.makepyfile(
        """
        import os
        import torch._dynamo.device_interface as di

        seen = []

        def test_leaks_a_registration():
            seen.append(os.environ["TORCHINDUCTOR_CACHE_DIR"])
            di.register_interface_for_device("leaked", di.CpuInterface)

        def test_sees_no_leak():
            assert "leaked" not in dict(di.get_registered_device_interfaces())
            assert os.environ["TORCHINDUCTOR_CACHE_DIR"] != seen[0]
        """
    )
    pytester.runpytest_subprocess(*PLUGIN, "-p", "no:randomly").assert_outcomes(passed=2)


def test_a_pytest_run_elsewhere_loads_nothing_of_the_project(tmp_path: Path) -> None:
    """Installing the project changes no other test suite: without the
    project's pytest configuration no plugin loads and no backend is imported."""
    (tmp_path / "test_elsewhere.py").write_text(
        textwrap.dedent(
            """
            import sys

            import torch


            def test_untouched():
                assert "rfc_shared.testing.plugin" not in sys.modules
                assert "torch_acc" not in sys.modules
                assert torch._C._get_privateuse1_backend_name() == "privateuseone"
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != ENV_BACKEND}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_no_backend_leaves_privateuse1_to_the_tests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--privateuse1-backend none`` runs tests as upstream's runs do: no
    backend is imported and PrivateUse1 keeps torch's name until a test
    renames it, even where the environment names a backend."""
    monkeypatch.setenv(selection.ENV, "none")
    monkeypatch.setenv(ENV_BACKEND, "torch_acc")
    pytester.makepyfile(
        """
        import os
        import sys

        import torch

        def test_untouched():
            assert "torch_acc" not in sys.modules
            assert torch._C._get_privateuse1_backend_name() == "privateuseone"
            assert "TORCH_RFC_BACKEND" not in os.environ
        """
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "--privateuse1-backend", "none")
    result.assert_outcomes(passed=1)
