"""pytest plugin shared by every slice's tests.

Opt-in: the project's own pytest configuration loads it
(``-p rfc_shared.testing.plugin``); a pytest run elsewhere in the same
environment loads nothing of the project's and imports no backend.

- ``@pytest.mark.slice("rfc1")`` names the slice a test exercises. Normally
  the test fails at setup when that slice is not active. With ``--control``
  (the ``control`` nox session, stock torch) only marked tests run, and each
  must fail: one that passes on stock torch tests nothing and fails the run.
- Every test leaves the device-interface registry, and the caches derived
  from it, as it found them.
- Every test gets its own Inductor cache directory: a warm FX graph cache can
  hide a broken configuration. The stock-vs-overlaid comparisons
  (:func:`~rfc_shared.testing.helpers.stock_and_overlaid`), whose FX graph
  and AOTAutograd caches are off, share one for the run instead: what they
  reuse is compiled from identical source text.
- ``--privateuse1-backend PACKAGE`` (default: ``TORCH_RFC_BACKEND``) names the
  backend under test, imported at session start (see
  :mod:`rfc_shared.conformance.backend`). ``--privateuse1-backend none`` leaves
  PrivateUse1 as torch has it, as upstream's own test runs do: a test that
  needs a renamed backend renames it itself.

Nothing here imports torch until a test runs.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from rfc_shared import selection
from rfc_shared.conformance.backend import ENV_BACKEND
from rfc_shared.conformance.registry import RegistrySnapshot
from rfc_shared.testing.helpers import KERNEL_CACHE_VAR


_CONTROL_NOTE = "fails on stock torch, as a slice test must"
# --privateuse1-backend's value for "no backend under test".
NO_BACKEND = "none"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("torch-rfc")
    group.addoption(
        "--control",
        action="store_true",
        help="run only slice-marked tests, on stock torch; each must fail",
    )
    group.addoption(
        "--privateuse1-backend",
        metavar="PACKAGE",
        help=(
            f"package of the PrivateUse1 backend under test (default: ${ENV_BACKEND}); "
            f"{NO_BACKEND!r}: none, as upstream's test runs"
        ),
    )


_made_kernel_cache = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slice(name): the test exercises that slice; under --control it must fail",
    )
    # Made by the run's first process; its workers inherit it.
    if KERNEL_CACHE_VAR not in os.environ:
        made = tempfile.mkdtemp(prefix="rfc-kernels-")
        os.environ[KERNEL_CACHE_VAR] = config.stash[_made_kernel_cache] = made


def pytest_unconfigure(config: pytest.Config) -> None:
    made = config.stash.get(_made_kernel_cache, None)
    if made is not None:
        os.environ.pop(KERNEL_CACHE_VAR, None)
        shutil.rmtree(made, ignore_errors=True)


def pytest_sessionstart(session: pytest.Session) -> None:
    # The PrivateUse1 rename is once per process: settle it before any test
    # module (upstream tests included) picks a name of its own.
    from rfc_shared.conformance.backend import ensure_privateuse1_backend

    package = session.config.getoption("privateuse1_backend")
    if package == NO_BACKEND:
        os.environ.pop(ENV_BACKEND, None)
        return
    if package:
        os.environ[ENV_BACKEND] = package  # subprocesses of the tests too
    ensure_privateuse1_backend(package)


def _required_slice(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("slice")
    if marker is None:
        return None
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(f"{item.nodeid}: use @pytest.mark.slice('<name>')")
    return marker.args[0]


def _active_slices() -> list[str]:
    import torch  # noqa: F401  (the overlay activates on the first torch import)

    from rfc_shared import overlay

    current = overlay.active()
    return [s.name for s in current.slices] if current is not None else []


def _slice_of_upstream_test(path: Path) -> str | None:
    """Upstream tests carry no pytest marker: they belong to the slice whose
    patches carry them (see :mod:`rfc_shared.testing.upstream`)."""
    from .upstream import slice_of_upstream_test

    return slice_of_upstream_test(path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slice") is None:
            name = _slice_of_upstream_test(item.path)
            if name is not None:
                item.add_marker(pytest.mark.slice(name))
    if not config.getoption("control"):
        return
    if not selection.stock_requested():
        raise pytest.UsageError(
            f"--control runs on stock torch: set {selection.ENV}={selection.NONE}"
        )
    keep = [i for i in items if _required_slice(i) is not None]
    dropped = [i for i in items if _required_slice(i) is None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_runtest_setup(item: pytest.Item) -> None:
    needed = _required_slice(item)
    if needed is None or item.config.getoption("control"):
        return
    active = _active_slices()
    if needed not in active:
        pytest.fail(
            f"this test needs slice {needed!r}; the overlay serves "
            f"{', '.join(active) or 'stock torch'} (see {selection.ENV})",
            pytrace=False,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report: pytest.TestReport = yield
    needed = _required_slice(item)
    if needed is None or not item.config.getoption("control"):
        return report
    # A tearDown that restores what only the slice has (rfc1's
    # _refresh_gpu_types()) fails on stock torch too: as expected.
    if report.failed and report.when in ("setup", "call", "teardown"):
        report.outcome = "skipped"
        report.wasxfail = _CONTROL_NOTE  # type: ignore[attr-defined]
    elif report.passed and report.when == "call":
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} passed on stock torch: it does not exercise slice "
            f"{needed!r}. Assert behaviour that only the slice provides."
        )
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    report: pytest.CollectReport = yield
    if (
        report.failed
        and isinstance(collector, pytest.Module)
        and collector.config.getoption("control")
    ):
        needed = _slice_of_upstream_test(collector.path)
        if needed is not None:
            # An upstream test module imports the slice's API at the top.
            report.outcome = "skipped"
            report.longrepr = (
                str(collector.path),
                None,
                f"does not import on stock torch, as a test of slice {needed!r} must",
            )
    return report


@pytest.fixture(autouse=True)
def _restore_device_registry() -> Iterator[None]:
    snapshot = RegistrySnapshot.take()
    yield
    snapshot.restore()


@pytest.fixture(autouse=True)
def _fresh_inductor_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("inductor")))
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    _clear_inductor_caches()
    yield
    _clear_inductor_caches()


def _clear_inductor_caches() -> None:
    utils = sys.modules.get("torch._inductor.utils")
    if utils is not None:
        utils.clear_caches()


@pytest.fixture
def privateuse1_backend() -> str:
    """The name of a renamed PrivateUse1 backend, setting one up if needed."""
    from rfc_shared.conformance.backend import ensure_privateuse1_backend

    return ensure_privateuse1_backend()
