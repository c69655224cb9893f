"""Every workflow of the project is a nox session; bare ``nox`` runs what CI runs.

Sessions share one prepared environment per torch base (``.nox/_env-<version>``:
that torch, the test and docs tools, every package of the repository).
Installing torch into a fresh virtualenv per session would cost minutes each; a
session instead selects what the overlay applies with ``TORCH_RFC_SLICES`` and
checks that the overlay reports exactly that selection before it runs anything.

The slice roster is read from the slice folders' ``pyproject.toml`` files (the
``torch_rfc.slices`` entry points); nothing here lists slices by hand.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nox


nox.needs_version = ">=2025.5.1"
nox.options.default_venv_backend = "none"
nox.options.error_on_external_run = False

ROOT = Path(__file__).parent.resolve()
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
PYTHON = "python3.11"  # the local CPU wheels of the backport bases are cp311
SLICES_VAR = "TORCH_RFC_SLICES"  # rfc_shared.selection.ENV, read before it is installed
SLICE_GROUP = "torch_rfc.slices"
ENGINE = ROOT / "shared"
ACC = ROOT / "torch_acc"
# The second test backend: a host device without streams whose memory is sealed outside its
# kernels. One process holds one PrivateUse1 backend, so it runs in processes of its own.
SEALED = ROOT / "torch_sealed"
# The test backends: C++ extensions built into wheels against each torch base.
BACKENDS = (ACC, SEALED)
WHEELS = ROOT / ".nox" / "_wheels"
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


@dataclass(frozen=True)
class Base:
    """A torch release the sessions install, and how."""

    version: str
    requirements: tuple[str, ...]

    @property
    def env(self) -> Path:
        return ROOT / ".nox" / f"_env-{self.version}"

    @property
    def python(self) -> str:
        return str(self.env / "bin" / "python")


def _bases() -> dict[str, Base]:
    """The bases nox installs, from the file that names every base (the
    engine's ``bases.toml``): the primary and the backports, primary first."""
    with (ENGINE / "src" / "rfc_shared" / "bases.toml").open("rb") as f:
        declared = tomllib.load(f)["base"]
    return {
        b["version"]: Base(b["version"], tuple(b["requirements"]))
        for b in sorted(declared, key=lambda b: b["role"] != "primary")
        if b["role"] in ("primary", "backport")
    }


BASES = _bases()
PRIMARY, *_backports = BASES.values()
BACKPORTS: tuple[Base, ...] = tuple(_backports)
# Our own pip calls may install releases newer than a machine-wide pip
# constraints file admits; this overrides it for them only.
PIP_ENV = {"PIP_CONSTRAINT": os.devnull}


def _project_folders() -> dict[str, Path]:
    """Every distribution folder but the test backends', by folder name."""
    return {
        p.parent.name: p.parent
        for p in sorted(ROOT.glob("*/pyproject.toml"))
        if p.parent not in BACKENDS
    }


def _slice_folders() -> dict[str, Path]:
    """Slice name -> folder, from the slice folders' entry points."""
    found = {}
    for folder in _project_folders().values():
        project = nox.project.load_toml(folder / "pyproject.toml").get("project", {})
        for name in project.get("entry-points", {}).get(SLICE_GROUP, {}):
            found[name] = folder
    return found


SLICES = _slice_folders()

nox.options.sessions = [
    "prepare",
    "lint",
    "engine",
    "acc",
    *SLICES,
    "stacked",
    "control",
    "conformance",
    "sealed",
    # Before docs: the docs show each base's conformance matrix.
    *(f"backport-{b.version}" for b in BACKPORTS),
    "docs",
]


def _digest(*parts: object) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(repr(part).encode())
    return h.hexdigest()


def _tree_digest(folder: Path, exclude: tuple[str, ...] = ()) -> str:
    """Digest of a package's sources, ignoring build by-products."""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        skip = any(
            p in ("__pycache__", "build", *exclude) or p.endswith((".egg-info", ".so"))
            for p in path.relative_to(folder).parts
        )
        if path.is_file() and not skip:
            h.update(str(path.relative_to(folder)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _pip(session: nox.Session, base: Base, *args: str) -> None:
    session.run(base.python, "-m", "pip", "install", "-q", *args, external=True, env=PIP_ENV)


def _prepare(session: nox.Session, base: Base = PRIMARY) -> str:
    """Create or update ``base``'s environment; returns its interpreter."""
    stamps = base.env / ".stamps.json"
    if not Path(base.python).exists():
        session.log(f"creating the environment {base.env.relative_to(ROOT)}")
        interpreter = shutil.which(PYTHON)
        if interpreter is None:
            session.error(f"{PYTHON} is required")
        session.run(interpreter, "-m", "venv", str(base.env), external=True)
        _pip(session, base, "--upgrade", "pip")
    done = json.loads(stamps.read_text()) if stamps.exists() else {}

    groups = nox.project.dependency_groups(PYPROJECT, "test", "docs", "lint", "build", "bench")
    wanted = _digest(base.requirements, groups)
    if done.get("requirements") != wanted:
        session.log(f"installing torch {base.version} and the tools (first run: a few minutes)")
        _pip(session, base, *base.requirements, *groups)
        done["requirements"] = wanted
        stamps.write_text(json.dumps(done))

    folders = _project_folders()
    digests = {name: _tree_digest(folder) for name, folder in folders.items()}
    changed = [name for name, digest in digests.items() if done.get(name) != digest]
    if changed:
        session.log(f"installing {', '.join(changed)} into {base.env.relative_to(ROOT)}")
        paths = [str(folders[name]) for name in changed]
        _pip(session, base, "--force-reinstall", "--no-deps", *paths)
        _pip(session, base, *paths)  # their dependencies, if new
        for name in changed:
            done[name] = digests[name]
        stamps.write_text(json.dumps(done))
    else:
        session.log(f"reusing {base.env.relative_to(ROOT)} (packages unchanged)")
    # After the project's packages: a stale overlay package must not meet a
    # current one in the backends' builds.
    for backend in BACKENDS:
        wheel = _backend_wheel(session, base, backend)
        if done.get(backend.name) != str(wheel):
            _pip(session, base, "--force-reinstall", "--no-deps", str(wheel))
            done[backend.name] = str(wheel)
            stamps.write_text(json.dumps(done))

    return base.python


def _backend_wheel(session: nox.Session, base: Base, backend: Path) -> Path:
    """A test backend's wheel (torch_acc, torch_sealed), built once per torch
    version and source hash."""
    # Its tests and benchmarks are not in the wheel.
    digest = _tree_digest(backend, exclude=("tests", "benchmarks"))
    folder = WHEELS / f"{backend.name}-{base.version}-{digest[:16]}"
    built = sorted(folder.glob(f"{backend.name}-*.whl"))
    if built:
        session.log(f"reusing the {backend.name} wheel {built[0].relative_to(ROOT)}")
        return built[0]
    session.log(f"building {backend.name} for torch {base.version} (C++ extension, a few minutes)")
    session.run(
        base.python,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        str(folder),
        str(_build_tree(backend, base)),
        external=True,
        # acc's CUDA extension is built on GPU machines only (tools/gpu_run.sh).
        # The build needs stock torch's headers only, never the overlay.
        env={
            **PIP_ENV,
            SLICES_VAR: "none",
            "MAX_JOBS": str(os.cpu_count() or 2),
            "TORCH_ACC_BUILD_CUDA": "0",
        },
    )
    return sorted(folder.glob(f"{backend.name}-*.whl"))[0]


def _build_tree(backend: Path, base: Base) -> Path:
    """A copy of ``backend``'s sources to build against ``base``: pip builds in
    the source tree, and the bases' builds may run at once (``prepare``). The
    copy keeps its ``build`` folder, so a rebuild compiles only what changed."""
    tree = WHEELS / "src" / f"{backend.name}-{base.version}"
    if tree.exists():
        for entry in tree.iterdir():
            if entry.is_dir() and entry.name != "build":
                shutil.rmtree(entry)
            elif entry.is_file():
                entry.unlink()
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so")
    shutil.copytree(backend, tree, ignore=ignore, dirs_exist_ok=True)
    return tree


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
        # Most tests wait on a child interpreter (a fresh overlay, a compile):
        # one worker per core keeps the cores busy.
        "--numprocesses",
        str(os.cpu_count() or 1),
        *args,
        *session.posargs,
        external=True,
        env={**COMPILE_ENV, SLICES_VAR: slices},
    )


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


def _slice_session(name: str) -> None:
    def run(session: nox.Session) -> None:
        py = _prepare(session)
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

    run.__doc__ = (
        f"Slice {name} alone (with the slices it requires): its patches' tests, "
        "with no backend, and its docs examples."
    )
    nox.session(name=name)(run)


for _name in SLICES:
    _slice_session(_name)


@nox.session
def prepare(session: nox.Session) -> None:
    """Every base's environment and backend wheels, made side by side: while the
    primary's torch downloads, a backport's torch installs and its backends build."""
    bases = (PRIMARY, *BACKPORTS)
    with ThreadPoolExecutor(max_workers=len(bases)) as pool:
        for made in [pool.submit(_prepare, session, base) for base in bases]:
            made.result()


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff over the project's own code; each slice's changes under PyTorch's settings."""
    py = _prepare(session)
    session.run(py, "-m", "ruff", "check", str(ROOT), *session.posargs, external=True)
    session.run(py, "-m", "ruff", "format", "--check", str(ROOT), external=True)
    session.run(py, "-m", "rfc_shared", "lint-series", external=True)


@nox.session
def engine(session: nox.Session) -> None:
    """The overlay engine, authoring tools and kits (rfc_shared) on their own."""
    py = _prepare(session)
    _pytest(session, py, *_test_dirs([ENGINE]), slices="none")


@nox.session
def acc(session: nox.Session) -> None:
    """The reference backend torch_acc: eager, its compile pieces, stock torch's baseline."""
    py = _prepare(session)
    _pytest(session, py, *_test_dirs([ACC]), slices="all")


def _own_slice_tests(base: Base) -> list[str]:
    """The project's own slice tests (end to end, through acc), run on the
    primary base; a backport's conformance matrices probe every site through
    acc and sealed there, the corpus compile included."""
    return _test_dirs(list(dict.fromkeys(SLICES.values()))) if base == PRIMARY else []


def _stacked(session: nox.Session, base: Base) -> None:
    py = _prepare(session, base)
    _check_overlay(session, py, "all")
    # The engine's and acc's tests run in their own sessions (acc's stacked
    # already). The reliability suite whole on the primary base; on a backport,
    # what can differ between bases: built-in devices compile as on stock.
    reliability = RELIABILITY if base == PRIMARY else RELIABILITY / "test_invariance.py"
    _pytest(session, py, *_own_slice_tests(base), str(reliability), slices="all")
    # The tests the patches carry, and upstream's tests of its landed decisions,
    # as upstream runs them: no out-of-tree backend.
    carried = _upstream_tests(session, py, "all")
    if base == PRIMARY:
        carried.append(_landed_tests(session, py, slices="all"))
    _pytest(session, py, *carried, *AS_UPSTREAM, slices="all")


def _control(session: nox.Session, base: Base) -> None:
    py = _prepare(session, base)
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
    py = _prepare(session, base)
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
        *session.posargs,
        external=True,
        env=COMPILE_ENV,
    )
    session.log(f"Markdown: {(out / f'{name}.md').relative_to(ROOT)}")


def _sealed(session: nox.Session, base: Base) -> None:
    """The second backend's tests and conformance matrix, in processes whose
    PrivateUse1 backend is sealed."""
    py = _prepare(session, base)
    _check_overlay(session, py, "all")
    # The project's pytest configuration names acc; the option given last wins.
    _pytest(session, py, *_test_dirs([SEALED]), "--privateuse1-backend", SEALED.name, slices="all")
    _conformance_matrix(session, base, SEALED)


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
    """The second test backend, sealed (a host device without streams whose memory is
    sealed outside its kernels): its tests, then its conformance matrix."""
    _sealed(session, PRIMARY)


def _backport_session(base: Base) -> None:
    def run(session: nox.Session) -> None:
        _stacked(session, base)
        _control(session, base)
        # Both backends' matrices: a backend written against the primary
        # base's API runs unchanged here. Their own tests run on the primary.
        _conformance_matrix(session, base)
        _conformance_matrix(session, base, SEALED)

    run.__doc__ = (
        f"The torch {base.version} backports: stacked (with the invariance suite), control, "
        "and the conformance matrices of acc and sealed."
    )
    nox.session(name=f"backport-{base.version}")(run)


for _base in BACKPORTS:
    _backport_session(_base)


@nox.session
def docs(session: nox.Session) -> None:
    """Sphinx docs with every slice applied: doctest, then HTML; warnings are errors.
    Then docs/tests: the pages' structure, the benchmark figures, and the built pages
    in headless Chromium (installed with apt-get when missing)."""
    py = _prepare(session)
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

    # The layout test drives Debian's chromium (docs/tests/test_layout.py), or the
    # browser CHROMIUM names.
    chromium = os.environ.get("CHROMIUM")
    if chromium and not Path(chromium).exists():
        session.error(f"CHROMIUM={chromium} does not exist")
    if not chromium and not Path("/usr/bin/chromium").exists():
        if shutil.which("apt-get") is None:
            session.error(
                "the layout test needs Chromium (/usr/bin/chromium) and apt-get is unavailable: "
                "install Debian's chromium package, or set CHROMIUM to a Chromium binary"
            )
        if os.geteuid() != 0:
            session.error(
                "the layout test needs Chromium (/usr/bin/chromium); installing it takes root: "
                "run `apt-get update && apt-get install -y chromium` as root, or set CHROMIUM"
            )
        session.log("installing chromium with apt-get (the layout test's browser)")
        apt_env = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", external=True, env=apt_env)
        session.run("apt-get", "install", "-y", "chromium", external=True, env=apt_env)
    _pytest(session, py, str(ROOT / "docs" / "tests"), slices="all")


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks as A/B ratios measured side by side (nox -s bench -- --cases is_gpu)."""
    py = _prepare(session)
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


def _slice_args(session: nox.Session) -> list[str]:
    """The slice named first, then options passed through (``--base 2.11.0``)."""
    if not session.posargs or session.posargs[0] not in SLICES:
        session.error(
            f"name one slice: nox -s {session.name} -- {{{','.join(SLICES)}}} [--base VERSION]"
        )
    return list(session.posargs)


@nox.session(default=False)
def export(session: nox.Session) -> None:
    """Write a slice as a git-am-able series with its tests (nox -s export -- rfc2)."""
    py = _prepare(session)
    session.run(py, "-m", "rfc_shared", "export", *_slice_args(session), external=True)


@nox.session(default=False)
def workspace(session: nox.Session) -> None:
    """Make a git work tree to author a slice in (nox -s workspace -- rfc2), or to
    port it to another torch base (nox -s workspace -- rfc2 --base 2.11.0)."""
    py = _prepare(session)
    session.run(py, "-m", "rfc_shared", "workspace", *_slice_args(session), external=True)


@nox.session(default=False)
def refresh(session: nox.Session) -> None:
    """Regenerate a slice's series from its workspace (nox -s refresh -- rfc2 [--base V])."""
    py = _prepare(session)
    session.run(py, "-m", "rfc_shared", "refresh", *_slice_args(session), external=True)


@nox.session(default=False)
def series(session: nox.Session) -> None:
    """Check that every slice's series applies to its base, alone and stacked.
    Not in the default run: other bases' sources come from their wheels
    (hundreds of MB, downloaded once)."""
    py = _prepare(session)
    session.run(py, "-m", "rfc_shared", "check-series", external=True, env=PIP_ENV)


if __name__ == "__main__":
    sys.exit("run this file with nox")
