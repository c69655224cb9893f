"""The environments the nox sessions run in: one per torch base
(``.nox/_env-<version>``: that torch, the test and docs tools, every package of
the repository), and the test backends' wheels built against each.

Imported by ``noxfile.py``; runs in nox's interpreter, so it needs only the
standard library and nox.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import nox


ROOT = Path(__file__).resolve().parents[1]
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
# Our own pip calls may install releases newer than a machine-wide pip
# constraints file admits; this overrides it for them only.
PIP_ENV = {"PIP_CONSTRAINT": os.devnull}


@dataclass(frozen=True)
class Base:
    """A torch release the sessions install, and how."""

    version: str
    requirements: tuple[str, ...]
    role: str

    @property
    def env(self) -> Path:
        return ROOT / ".nox" / f"_env-{self.version}"

    @property
    def python(self) -> str:
        return str(self.env / "bin" / "python")


def _engine_bases() -> ModuleType:
    """The engine's reader of ``bases.toml`` (``rfc_shared.overlay.base``),
    loaded from its file: nox's interpreter has no ``rfc_shared`` installed,
    and that module needs only the standard library."""
    path = ENGINE / "src" / "rfc_shared" / "overlay" / "base.py"
    spec = importlib.util.spec_from_file_location("_rfc_shared_bases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def installed_bases() -> tuple[Base, ...]:
    """The bases nox installs, primary first: those the engine reads from
    ``bases.toml`` with requirements (the primary, the backports, and a GPU
    image's base that names its CPU-runnable wheel)."""
    return tuple(
        Base(b.version, b.requirements, b.role)
        for b in _engine_bases().KNOWN_BASES
        if b.requirements
    )


PRIMARY, *_others = installed_bases()
BACKPORTS: tuple[Base, ...] = tuple(b for b in _others if b.role == "backport")
# The GPU image's bases, run on the CPU too: the tests their series carry.
GPU_BASES: tuple[Base, ...] = tuple(b for b in _others if b.role == "gpu")


def project_folders() -> dict[str, Path]:
    """Every distribution folder but the test backends', by folder name."""
    return {
        p.parent.name: p.parent
        for p in sorted(ROOT.glob("*/pyproject.toml"))
        if p.parent not in BACKENDS
    }


def slice_folders(followups: bool = False) -> dict[str, Path]:
    """Slice name -> folder, from the slice folders' entry points: the slices,
    or with ``followups`` the follow-up PRs (a follow-up's series lives in its
    package's ``followups/<name>/``, rfc_shared.overlay.slices.Slice)."""
    found = {}
    for folder in project_folders().values():
        project = nox.project.load_toml(folder / "pyproject.toml").get("project", {})
        for name in project.get("entry-points", {}).get(SLICE_GROUP, {}):
            is_followup = any(folder.glob(f"src/*/followups/{name}/"))
            if is_followup == followups:
                found[name] = folder
    return found


def prepare_environment(session: nox.Session, base: Base = PRIMARY) -> str:
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

    folders = project_folders()
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
    # current one in the backends' builds. A GPU image's base builds acc over
    # CUDA there (tools/gpu_run.sh); its CPU run needs no backend.
    for backend in BACKENDS if base.role != "gpu" else ():
        wheel = _backend_wheel(session, base, backend)
        if done.get(backend.name) != str(wheel):
            _pip(session, base, "--force-reinstall", "--no-deps", str(wheel))
            done[backend.name] = str(wheel)
            stamps.write_text(json.dumps(done))

    return base.python


def ensure_chromium(session: nox.Session) -> None:
    """Debian's chromium for the layout test (docs/tests/test_layout.py), or the
    browser ``CHROMIUM`` names; installed with apt-get when missing."""
    chromium = os.environ.get("CHROMIUM")
    if chromium and not Path(chromium).exists():
        session.error(f"CHROMIUM={chromium} does not exist")
    if chromium or Path("/usr/bin/chromium").exists():
        return
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
