"""Every workflow of the project is a nox session; bare ``nox`` runs what CI runs.

Sessions share one prepared environment per torch base (``tools/provision.py``).
Installing torch into a fresh virtualenv per session would cost minutes each; a
session instead selects what the overlay applies with ``TORCH_RFC_SLICES`` and
checks that the overlay reports exactly that selection before it runs anything.

The slice roster is read from the slice folders' ``pyproject.toml`` files (the
``torch_rfc.slices`` entry points) and the bases from the engine's
``bases.toml``; nothing here lists slices or bases by hand.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nox
from nox.command import CommandFailed


sys.path.insert(0, str(Path(__file__).parent / "tools"))
from provision import (
    ACC,
    BACKENDS,
    BACKPORTS,
    ENGINE,
    GPU_BASES,
    PIP_ENV,
    PRIMARY,
    ROOT,
    SEALED,
    SLICES_VAR,
    Base,
    ensure_chromium,
    prepare_environment,
    slice_folders,
)


nox.needs_version = ">=2025.5.1"
nox.options.default_venv_backend = "none"
nox.options.error_on_external_run = False

GENERATED = ROOT / "docs" / "_generated"
# Tests of the slices together (bad inputs, faults, invariance); run stacked.
RELIABILITY = ROOT / "tests" / "reliability"
# acc's Triton kernels run in Triton's interpreter on machines without a GPU.
COMPILE_ENV = {"TRITON_INTERPRET": "1"}
# The pytest plugin's --privateuse1-backend value for none (upstream's test runs).
NO_BACKEND = "none"
# Upstream's tests as upstream runs them: no out-of-tree backend, and each file
# whole in one process, in order (some rely on modules an earlier test imported).
AS_UPSTREAM = ("--privateuse1-backend", NO_BACKEND, "--dist", "loadfile")
SLICES = slice_folders()
FOLLOWUPS = slice_folders(followups=True)

nox.options.sessions = [
    "prepare",
    "lint",
    "engine",
    "acc",
    *SLICES,
    "followups",
    "stacked",
    "control",
    "conformance",
    "sealed",
    # Before docs: the docs show each base's conformance matrix.
    *(f"backport-{b.version}" for b in BACKPORTS),
    *(f"carried-{b.version}" for b in GPU_BASES),
    "docs",
]


@nox.session
def prepare(session: nox.Session) -> None:
    """Every base's environment and backend wheels, made side by side."""
    # While the primary's torch downloads, a backport's installs and its backends build.
    bases = (PRIMARY, *BACKPORTS, *GPU_BASES)
    with ThreadPoolExecutor(max_workers=len(bases)) as pool:
        for made in [pool.submit(_prepare_with_retry, session, base) for base in bases]:
            made.result()


def _prepare_with_retry(session: nox.Session, base: Base) -> str:
    """``base``'s environment, tried once more after a failed command.

    Preparing downloads gigabytes from the package index while the backends
    compile; a dropped connection or a killed compiler must not fail CI when
    the next try succeeds. The work is stamped step by step, so the second
    try redoes only the failed step; a failure that repeats still fails.
    """
    try:
        return prepare_environment(session, base)
    except CommandFailed as failure:
        session.warn(f"preparing torch {base.version} failed ({failure.reason}); trying once more")
        return prepare_environment(session, base)


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff over the project's own code; each slice's changes under PyTorch's settings."""
    py = prepare_environment(session)
    session.run(py, "-m", "ruff", "check", str(ROOT), *session.posargs, external=True)
    session.run(py, "-m", "ruff", "format", "--check", str(ROOT), external=True)
    session.run(py, "-m", "rfc_shared", "lint-series", external=True)


@nox.session
def engine(session: nox.Session) -> None:
    """The overlay engine, authoring tools and kits (rfc_shared) on their own."""
    py = prepare_environment(session)
    _pytest(session, py, *_test_dirs([ENGINE]), slices="none")


@nox.session
def acc(session: nox.Session) -> None:
    """The reference backend torch_acc: eager, its compile pieces, stock torch's baseline."""
    py = prepare_environment(session)
    # The slowest files first (the benchmark's workloads, stock torch's corpus
    # compiles, the interpreted libdevice checks: a minute or more each in
    # Triton's interpreter): started early, they are no tail a worker waits on.
    slowest = ["test_workloads.py", "test_stock_baseline.py", "test_interpreted_libdevice.py"]
    tests = sorted(
        (ACC / "tests").glob("test_*.py"),
        key=lambda p: (slowest.index(p.name) if p.name in slowest else len(slowest), p.name),
    )
    _pytest(session, py, *map(str, tests), slices="all")


def _slice_session(name: str) -> None:
    """Session ``name``: one slice alone (with the slices it requires)."""

    def run(session: nox.Session) -> None:
        py = prepare_environment(session)
        _check_overlay(session, py, name)
        # As a reviewer runs a patch's Test Plan: that slice's patches on
        # stock torch, no out-of-tree backend. The slice's own tests, end to
        # end through acc, run with every slice (stacked) and on stock torch
        # (control).
        tests = _upstream_tests(session, py, name, only=name)
        if tests:
            _pytest(session, py, *tests, *AS_UPSTREAM, slices=name)
        else:
            session.log(f"slice {name}'s patches carry no tests")
        _doctest(session, py, [f"{name}.md"], slices=name)

    run.__doc__ = f"Slice {name} alone: its patches' tests, with no backend, and its docs examples."
    nox.session(name=name)(run)


for _name in SLICES:
    _slice_session(_name)


@nox.session
def followups(session: nox.Session) -> None:
    """Each follow-up PR alone (with the slices it requires): its patch's tests,
    with no backend; then the follow-up pages' examples, stacked."""
    py = prepare_environment(session)
    for name in FOLLOWUPS:
        _check_overlay(session, py, name)
        tests = _upstream_tests(session, py, name, only=name)
        if not tests:
            session.error(f"follow-up {name}'s patch carries no test")
        _pytest(session, py, *tests, *AS_UPSTREAM, slices=name)
    pages = sorted(p.name for p in (ROOT / "docs").glob("*_followups.md"))
    _doctest(session, py, pages, slices="all")


@nox.session
def stacked(session: nox.Session) -> None:
    """All slices applied together: every slice's tests, then the reliability suite."""
    _stacked(session, PRIMARY)


@nox.session
def control(session: nox.Session) -> None:
    """Slice-marked tests on stock torch: each must fail, or the session fails."""
    _control(session, PRIMARY)


@nox.session
def conformance(session: nox.Session) -> None:
    """The main job: probe acc at every RFC site, stock vs each slice vs stacked."""
    _conformance_matrix(session, PRIMARY)


@nox.session
def sealed(session: nox.Session) -> None:
    """The second test backend, sealed: its tests, then its conformance matrix."""
    _sealed(session, PRIMARY)


@nox.session(name="minimal-matrix")
def minimal_matrix(session: nox.Session) -> None:
    """Not run by default (minutes): the conformance page's table of what stock torch and each
    slice give a host-class and a GPU-class backend, from the matrices of the backend guide's
    two minimal backends (docs/examples)."""
    py = prepare_environment(session, PRIMARY)
    site = ROOT / "docs" / "_build" / "examples"
    session.run(py, str(ROOT / "docs" / "examples" / "install.py"), str(site), external=True)
    out = GENERATED / "conformance"
    records = []
    for package in ("minimal_host", "minimal_gpu"):
        record = out / f"{package}-torch-{PRIMARY.version}.json"
        session.run(
            py,
            *("-m", "rfc_shared.conformance", "--backend", package, "--base", PRIMARY.version),
            *("--matrix", "--json", str(record)),
            external=True,
            env={**COMPILE_ENV, "PYTHONPATH": str(site)},
        )
        records.append(str(record))
    table = out / f"by-class-torch-{PRIMARY.version}.md"
    session.run(
        py, str(ROOT / "tools" / "conformance_by_class.py"), *records, str(table), external=True
    )
    session.log(f"Markdown: {table.relative_to(ROOT)}")


def _backport_session(base: Base) -> None:
    """Session ``backport-<version>`` for a backport base."""

    def run(session: nox.Session) -> None:
        _stacked(session, base)
        _control(session, base)
        # Both backends' matrices: a backend written against the primary
        # base's API runs unchanged here. Their own tests run on the primary.
        _conformance_matrix(session, base)
        _conformance_matrix(session, base, SEALED)

    run.__doc__ = f"The torch {base.version} backports: stacked, control, both matrices."
    nox.session(name=f"backport-{base.version}")(run)


for _base in BACKPORTS:
    _backport_session(_base)


def _carried_session(base: Base) -> None:
    """Session ``carried-<version>`` for a GPU image's base, on the CPU."""

    def run(session: nox.Session) -> None:
        py = prepare_environment(session, base)
        _check_overlay(session, py, "all")
        carried = _upstream_tests(session, py, "all")
        _pytest(session, py, *carried, *AS_UPSTREAM, slices="all")
        _pytest(session, py, "--control", *carried, *AS_UPSTREAM, slices="none")

    run.__doc__ = (
        f"The torch {base.version} series (the GPU image's) on the CPU: their tests, "
        "stacked, then failing on stock."
    )
    nox.session(name=f"carried-{base.version}")(run)


for _base in GPU_BASES:
    _carried_session(_base)


@nox.session
def docs(session: nox.Session) -> None:
    """Sphinx doctest and HTML with every slice applied, then docs/tests (Chromium too)."""
    py = prepare_environment(session)
    for backend in BACKENDS:
        if not (GENERATED / "conformance" / f"{_matrix_name(PRIMARY, backend)}.md").exists():
            _conformance_matrix(session, PRIMARY, backend)
    if not (GENERATED / "bad_inputs.md").exists():  # written by the bad-input tests
        _pytest(session, py, "-q", str(RELIABILITY / "test_bad_inputs.py"), slices="all")
    env = {**COMPILE_ENV, SLICES_VAR: "all"}
    for builder in ("doctest", "html"):
        session.run(
            py,
            "-m",
            "sphinx",
            "-E",
            "-W",
            "--keep-going",
            "-n",
            "-b",
            builder,
            str(ROOT / "docs"),
            str(ROOT / "docs" / "_build" / builder),
            external=True,
            env=env,
        )
    session.log(f"HTML: {ROOT / 'docs' / '_build' / 'html' / 'index.html'}")
    ensure_chromium(session)
    _pytest(session, py, str(ROOT / "docs" / "tests"), slices="all")


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks as A/B ratios measured side by side (nox -s bench -- --cases is_gpu)."""
    py = prepare_environment(session)
    session.run(
        py,
        "-m",
        "rfc_shared.bench",
        "--out",
        str(GENERATED / "bench"),
        *session.posargs,
        external=True,
        env=COMPILE_ENV,
    )


def _authoring_session(command: str, doc: str) -> None:
    """Session ``command``: ``python -m rfc_shared <command> SLICE [options]``."""

    def run(session: nox.Session) -> None:
        named = {**SLICES, **FOLLOWUPS}
        if not session.posargs or session.posargs[0] not in named:
            session.error(
                f"name one slice or follow-up: nox -s {command} -- {{{','.join(named)}}} "
                "[--base VERSION]"
            )
        py = prepare_environment(session)
        session.run(py, "-m", "rfc_shared", command, *session.posargs, external=True)

    run.__doc__ = doc
    nox.session(name=command, default=False)(run)


_authoring_session("export", "Write a slice as a git-am-able series with its tests (-- rfc2).")
_authoring_session("workspace", "Make a git work tree to author or port a slice in (-- rfc2).")
_authoring_session("refresh", "Regenerate a slice's series from its workspace (-- rfc2).")


@nox.session(default=False)
def series(session: nox.Session) -> None:
    """Check that every slice's series applies to each of its bases, alone and
    stacked, and adds the same public surface on each."""
    # Not in the default run: other bases' sources come from their wheels
    # (hundreds of MB, downloaded once).
    py = prepare_environment(session)
    session.run(py, "-m", "rfc_shared", "check-series", external=True, env=PIP_ENV)
    session.run(py, "-m", "rfc_shared", "check-surface", external=True, env=PIP_ENV)


# -- helpers ------------------------------------------------------------------


def _check_overlay(session: nox.Session, py: str, slices: str) -> None:
    """Fail unless ``TORCH_RFC_SLICES=slices`` serves exactly what it resolves to."""
    report = session.run(
        py,
        "-m",
        "rfc_shared",
        "status",
        "--import-torch",
        "--expect-closure",
        slices,
        external=True,
        silent=True,
        env={SLICES_VAR: slices},
    )
    served = [s["name"] for s in json.loads(report)["slices"]]
    session.log(f"overlay serves: {', '.join(served) or 'stock torch'}")


def _pytest(session: nox.Session, py: str, *args: str, slices: str) -> None:
    session.run(
        py,
        "-m",
        "pytest",
        "-c",
        str(ROOT / "pyproject.toml"),
        "--rootdir",
        str(ROOT),
        "--numprocesses",
        str(_workers(args)),
        *args,
        *session.posargs,
        external=True,
        env={**COMPILE_ENV, SLICES_VAR: slices},
    )


def _workers(args: tuple[str, ...]) -> int:
    """Most tests wait on a child interpreter (a fresh overlay, a compile): one
    worker per core keeps the cores busy. A run that hands out whole files
    (``--dist loadfile``) gets no more workers than it has files, and none of
    its own for one file: a worker beyond that only imports torch and
    collects the tests."""
    cores = os.cpu_count() or 1
    if "loadfile" not in args:
        return cores
    files = sum(
        1 if path.is_file() else sum(1 for _ in path.rglob("test_*.py"))
        for path in map(Path, args)
        if path.exists()
    )
    return min(cores, files) if files > 1 else 0


def _test_dirs(folders: list[Path]) -> list[str]:
    dirs = [folder / "tests" for folder in folders]
    return [str(d) for d in dirs if any(d.rglob("test_*.py"))]


def _upstream_tests(
    session: nox.Session, py: str, slices: str, only: str | None = None
) -> list[str]:
    """The tests the selected slices' patches carry, written out per slice
    (``only``: that slice's alone)."""
    dest = ROOT / ".nox" / "_upstream_tests" / Path(py).parents[1].name / slices.replace(",", "-")
    out = session.run(
        py,
        "-m",
        "rfc_shared",
        "upstream-tests",
        str(dest),
        "--slices",
        slices,
        external=True,
        silent=True,
    )
    folders = [line for line in out.splitlines() if line.strip()]
    return [f for f in folders if only is None or Path(f).name == only]


def _landed_tests(session: nox.Session, py: str, slices: str) -> str:
    """Upstream's own tests of the decisions it landed in the code the slices
    touch, as the selected slices leave them, written out; returns the folder."""
    dest = ROOT / ".nox" / "_landed_tests" / Path(py).parents[1].name / slices.replace(",", "-")
    session.run(
        py,
        "-m",
        "rfc_shared",
        "upstream-tests",
        str(dest),
        "--landed",
        "--slices",
        slices,
        external=True,
        silent=True,
    )
    return str(dest)


def _doctest(session: nox.Session, py: str, pages: list[str], slices: str) -> None:
    existing = [str(ROOT / "docs" / p) for p in pages if (ROOT / "docs" / p).exists()]
    if not existing:
        return
    out = ROOT / ".nox" / "_doctest" / slices.replace(",", "-")
    session.run(
        py,
        "-m",
        "sphinx",
        "-E",
        "-W",
        "--keep-going",
        "-q",
        "-b",
        "doctest",
        str(ROOT / "docs"),
        str(out),
        *existing,
        external=True,
        env={**COMPILE_ENV, SLICES_VAR: slices},
    )


def _own_slice_tests(base: Base) -> list[str]:
    """The project's own slice tests (end to end, through acc), run on the
    primary base; a backport's conformance matrices probe every site through
    acc and sealed there, the corpus compile included."""
    return _test_dirs(list(dict.fromkeys(SLICES.values()))) if base == PRIMARY else []


def _stacked(session: nox.Session, base: Base) -> None:
    py = prepare_environment(session, base)
    _check_overlay(session, py, "all")
    # The engine's and acc's tests run in their own sessions (acc's stacked
    # already). The reliability suite whole on the primary base; on a backport,
    # what can differ between bases: built-in devices compile as on stock.
    # Its longest tests first (cache isolation compiles in a process per column,
    # one after another; invariance compiles the corpus on each side): started
    # early, they are no tail a pytest worker waits on.
    if base == PRIMARY:
        first = ["test_cache_isolation.py", "test_invariance.py"]
        reliability = sorted(
            RELIABILITY.glob("test_*.py"),
            key=lambda p: (first.index(p.name) if p.name in first else len(first), p.name),
        )
    else:
        reliability = [RELIABILITY / "test_invariance.py"]
    _pytest(session, py, *map(str, reliability), *_own_slice_tests(base), slices="all")
    # The tests the patches carry, and upstream's tests of its landed decisions,
    # as upstream runs them: no out-of-tree backend.
    carried = _upstream_tests(session, py, "all")
    if base == PRIMARY:
        carried.append(_landed_tests(session, py, slices="all"))
    _pytest(session, py, *carried, *AS_UPSTREAM, slices="all")


def _control(session: nox.Session, base: Base) -> None:
    py = prepare_environment(session, base)
    _check_overlay(session, py, "none")
    if own := _own_slice_tests(base):
        _pytest(session, py, "--control", *own, slices="none")
    carried = _upstream_tests(session, py, "all")
    _pytest(session, py, "--control", *carried, *AS_UPSTREAM, slices="none")
    if base == PRIMARY:
        # What the stacked run of upstream's landed-decision tests is compared with.
        landed = _landed_tests(session, py, slices="none")
        _pytest(session, py, landed, *AS_UPSTREAM, slices="none")


def _matrix_name(base: Base, backend: Path) -> str:
    """The conformance matrix's file name, without suffix: acc's is the main one."""
    prefix = "" if backend == ACC else f"{backend.name}-"
    return f"{prefix}torch-{base.version}"


def _conformance_matrix(session: nox.Session, base: Base, backend: Path = ACC) -> None:
    py = prepare_environment(session, base)
    out = GENERATED / "conformance"
    name = _matrix_name(base, backend)
    session.run(
        py,
        "-m",
        "rfc_shared.conformance",
        "--backend",
        backend.name,
        "--base",
        base.version,
        "--matrix",
        "--markdown",
        str(out / f"{name}.md"),
        "--json",
        str(out / f"{name}.json"),
        # Each slice works alone for the backend, with only what it requires.
        *(["--require-alone"] if base == PRIMARY else []),
        *session.posargs,
        external=True,
        env=COMPILE_ENV,
    )
    session.log(f"Markdown: {(out / f'{name}.md').relative_to(ROOT)}")


def _sealed(session: nox.Session, base: Base) -> None:
    """The second backend's tests and conformance matrix, in processes whose
    PrivateUse1 backend is sealed (a host device without streams whose memory
    is sealed outside its kernels)."""
    py = prepare_environment(session, base)
    _check_overlay(session, py, "all")
    # The project's pytest configuration names acc; the option given last wins.
    _pytest(session, py, *_test_dirs([SEALED]), "--privateuse1-backend", SEALED.name, slices="all")
    _conformance_matrix(session, base, SEALED)


if __name__ == "__main__":
    sys.exit("run this file with nox")
