"""Every workflow of the project is a nox session; bare ``nox`` runs what CI runs.

All sessions share one prepared environment (``.nox/_env``: torch 2.13.0, the
test and docs tools, every package of the repository). Installing torch into
ten fresh virtualenvs would cost minutes each; a session instead selects what
the overlay applies with ``TORCH_RFC_SLICES``, and checks that the overlay
reports exactly that selection before it runs anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import nox


nox.needs_version = ">=2025.5.1"
nox.options.default_venv_backend = "none"
nox.options.error_on_external_run = False

ROOT = Path(__file__).parent.resolve()
ENV = ROOT / ".nox" / "_env"
PYTHON = "python3.11"  # the local torch 2.13.0 CPU wheel is cp311
TORCH = "torch==2.13.0"
TRITON = "triton==3.7.1"  # the release torch 2.13.0 pairs with
ACC = ROOT / "shared" / "torch_acc"
WHEELS = ROOT / ".nox" / "_wheels"
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")

# Slice name -> the folder of its package, in stack order.
SLICES = {
    "shared": "shared",
    "rfc1": "rfc1_identity",
    "rfc2": "rfc2_dynamo",
    "rfc3": "rfc3_inductor",
    "lazy_reg": "rfc_lazy_reg",
    "backend_feature": "rfc_backend_feature",
}
# Required slices beyond shared (mirrors each package's Slice declaration).
REQUIRES = {"rfc3": ["rfc1"], "backend_feature": ["rfc1"]}

nox.options.sessions = [
    "lint",
    *SLICES,
    "stacked",
    "control",
    "conformance",
    "docs",
]
GENERATED = ROOT / "docs" / "_generated"
# Tests of the slices together (bad inputs, faults, invariance); run stacked.
RELIABILITY = ROOT / "tests" / "reliability"
# acc's Triton kernels run in Triton's interpreter on machines without a GPU.
COMPILE_ENV = {"TRITON_INTERPRET": "1"}


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


def _python() -> str:
    return str(ENV / "bin" / "python")


def _pip(session: nox.Session, *args: str) -> None:
    session.run(_python(), "-m", "pip", "install", "-q", *args, external=True)


def _prepare(session: nox.Session) -> str:
    """Create or update the shared environment; returns its interpreter."""
    stamps = ENV / ".stamps.json"
    if not (ENV / "bin" / "python").exists():
        session.log(f"creating the shared environment {ENV.relative_to(ROOT)}")
        interpreter = shutil.which(PYTHON)
        if interpreter is None:
            session.error(f"{PYTHON} is required (torch 2.13.0's CPU wheel is cp311)")
        session.run(interpreter, "-m", "venv", str(ENV), external=True)
        _pip(session, "--upgrade", "pip")
    done = json.loads(stamps.read_text()) if stamps.exists() else {}

    groups = nox.project.dependency_groups(PYPROJECT, "test", "docs", "lint", "build", "bench")
    wanted = _digest(TORCH, TRITON, groups)
    if done.get("requirements") != wanted:
        session.log("installing torch, triton and the tools (first run: a few minutes)")
        _pip(session, TORCH, TRITON, *groups)
        done["requirements"] = wanted
        stamps.write_text(json.dumps(done))

    wheel = _acc_wheel(session)
    if done.get("torch_acc") != str(wheel):
        _pip(session, "--force-reinstall", "--no-deps", str(wheel))
        done["torch_acc"] = str(wheel)
        stamps.write_text(json.dumps(done))

    # torch_acc (inside shared/) is a separate distribution, built above.
    digests = {f: _tree_digest(ROOT / f, exclude=("torch_acc",)) for f in SLICES.values()}
    changed = [f for f, digest in digests.items() if done.get(f) != digest]
    if changed:
        session.log(f"installing {', '.join(changed)}")
        folders = [str(ROOT / f) for f in changed]
        _pip(session, "--force-reinstall", "--no-deps", *folders)
        _pip(session, *folders)  # their dependencies, if new
        for folder in changed:
            done[folder] = digests[folder]
        stamps.write_text(json.dumps(done))
    else:
        session.log("reusing the shared environment (packages unchanged)")
    return _python()


def _acc_wheel(session: nox.Session) -> Path:
    """torch_acc's wheel, built once per torch version and source hash."""
    torch_version = session.run(
        _python(), "-c", "import torch; print(torch.__version__)", external=True, silent=True
    ).strip()
    folder = WHEELS / f"torch_acc-{torch_version}-{_tree_digest(ACC)[:16]}"
    built = sorted(folder.glob("torch_acc-*.whl"))
    if built:
        session.log(f"reusing the torch_acc wheel {built[0].relative_to(ROOT)}")
        return built[0]
    session.log(f"building torch_acc for torch {torch_version} (C++ extension, a few minutes)")
    session.run(
        _python(),
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        str(folder),
        str(ACC),
        external=True,
        env={"MAX_JOBS": str(os.cpu_count() or 2)},
    )
    return sorted(folder.glob("torch_acc-*.whl"))[0]


def _closure(name: str) -> list[str]:
    wanted = {"shared", name, *REQUIRES.get(name, [])}
    return [s for s in SLICES if s in wanted]


def _check_overlay(session: nox.Session, py: str, slices: str, expected: list[str]) -> None:
    """Fail unless ``TORCH_RFC_SLICES=slices`` makes the overlay serve ``expected``."""
    session.run(
        py,
        "-m",
        "rfc_shared",
        "status",
        "--import-torch",
        "--expect",
        ",".join(expected),
        external=True,
        silent=True,
        env={"TORCH_RFC_SLICES": slices},
    )
    session.log(f"overlay serves: {', '.join(expected) or 'stock torch'}")


def _pytest(session: nox.Session, py: str, *args: str, slices: str) -> None:
    session.run(
        py,
        "-m",
        "pytest",
        "-c",
        str(ROOT / "pyproject.toml"),
        "--rootdir",
        str(ROOT),
        *args,
        *session.posargs,
        external=True,
        env={**COMPILE_ENV, "TORCH_RFC_SLICES": slices},
    )


def _test_dirs(names: list[str]) -> list[str]:
    dirs = []
    for name in names:
        folders = [ROOT / SLICES[name] / "tests"]
        if name == "shared":
            folders.append(ACC / "tests")
        dirs += [str(f) for f in folders if any(f.rglob("test_*.py"))]
    return dirs


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
        env={**COMPILE_ENV, "TORCH_RFC_SLICES": slices},
    )


def _slice_session(name: str) -> None:
    def run(session: nox.Session) -> None:
        py = _prepare(session)
        _check_overlay(session, py, name, _closure(name))
        dirs = _test_dirs([name])
        if dirs:
            _pytest(session, py, *dirs, slices=name)
        else:
            session.log(f"slice {name} has no tests yet")
        _doctest(session, py, [f"{name}.md"], slices=name)

    run.__doc__ = f"Slice {name} alone (with its dependencies): its tests and its docs examples."
    nox.session(name=name)(run)


for _name in SLICES:
    _slice_session(_name)


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff lint and format check over the project's own Python code."""
    py = _prepare(session)
    session.run(py, "-m", "ruff", "check", str(ROOT), *session.posargs, external=True)
    session.run(py, "-m", "ruff", "format", "--check", str(ROOT), external=True)


@nox.session
def stacked(session: nox.Session) -> None:
    """All slices applied together: every test suite, then the reliability suite."""
    py = _prepare(session)
    _check_overlay(session, py, "all", list(SLICES))
    _pytest(session, py, *_test_dirs(list(SLICES)), str(RELIABILITY), slices="all")


@nox.session
def control(session: nox.Session) -> None:
    """Slice-marked tests on stock torch: each must fail, or the session fails."""
    py = _prepare(session)
    _check_overlay(session, py, "none", [])
    _pytest(session, py, "--control", *_test_dirs(list(SLICES)), slices="none")


def _conformance_matrix(session: nox.Session, py: str) -> None:
    session.run(
        py,
        "-m",
        "rfc_shared.conformance",
        "--matrix",
        "--markdown",
        str(GENERATED / "conformance.md"),
        *session.posargs,
        external=True,
        env=COMPILE_ENV,
    )


@nox.session
def conformance(session: nox.Session) -> None:
    """The main job: probe acc at every RFC site, stock vs each slice vs stacked."""
    py = _prepare(session)
    _conformance_matrix(session, py)
    session.log(f"Markdown: {(GENERATED / 'conformance.md').relative_to(ROOT)}")


@nox.session
def docs(session: nox.Session) -> None:
    """Sphinx docs with every slice applied: doctest, then HTML; warnings are errors."""
    py = _prepare(session)
    if not (GENERATED / "conformance.md").exists():
        _conformance_matrix(session, py)
    if not (GENERATED / "bad_inputs.md").exists():  # written by the bad-input tests
        _pytest(session, py, "-q", str(RELIABILITY / "test_bad_inputs.py"), slices="all")
    env = {**COMPILE_ENV, "TORCH_RFC_SLICES": "all"}
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
    """Write a slice as a git-am-able series plus its upstream tests (nox -s export -- rfc2)."""
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
    session.run(py, "-m", "rfc_shared", "check-series", external=True)


if __name__ == "__main__":
    sys.exit("run this file with nox")
