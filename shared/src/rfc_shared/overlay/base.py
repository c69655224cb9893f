"""The upstream torch a patch series is written against, and the one installed.

Reading the installed torch's version never imports torch: the overlay has to
decide what to patch before the first ``torch`` module is executed.
"""

from __future__ import annotations

import ast
import importlib.machinery
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, order=True)
class TorchBase:
    """A torch release identified by its public version and upstream commit."""

    version: str
    git_version: str

    def __str__(self) -> str:
        return f"torch {self.version} (git {self.git_version[:10]})"

    @property
    def series_dir_name(self) -> str:
        """Name of the folder that holds a slice's series for this base."""
        return f"torch-{self.version}"

    @property
    def landed_tests_dir(self) -> Path:
        """Upstream's own test files at this base (``test/...``) that pin
        decisions upstream landed in the code the slices touch. A wheel has no
        ``test/`` folder, so the project keeps them; a patch that changes such
        a decision changes the test here, in the same patch."""
        return Path(__file__).parents[1] / "landed_tests" / self.series_dir_name


#: The primary base: the newest release, what a slice's upstream PR is cut against.
TORCH_2_15_0 = TorchBase("2.15.0", "d0f2af8b66b20da4baa50644c0cd3f887a2eae2e")

#: Backport bases: the same API (what upstream landed by 2.15 plus the slice)
#: for environments that pin an older release.
TORCH_2_13_0 = TorchBase("2.13.0", "cf30153c4c131c8164ee7798e5022d810682e2cb")
TORCH_2_11_0 = TorchBase("2.11.0", "70d99e998b4955e0049d13a98d77ae1b14db1f45")

#: Every base a series may be ported to, primary first.
KNOWN_BASES = (TORCH_2_15_0, TORCH_2_13_0, TORCH_2_11_0)


class UnknownBaseError(ValueError):
    """A torch version that is not one of :data:`KNOWN_BASES`."""


def known_base(version: str) -> TorchBase:
    """The known base whose public version is ``version``.

    Raises:
        UnknownBaseError: ``version`` names no known base.
    """
    for base in KNOWN_BASES:
        if base.version == version:
            return base
    known = ", ".join(b.version for b in KNOWN_BASES)
    raise UnknownBaseError(f"torch {version} is not a known base (known: {known})")


class TorchNotFoundError(RuntimeError):
    """No importable ``torch`` package on ``sys.path``."""


def torch_package_dir() -> Path:
    """Folder of the ``torch`` package that ``import torch`` would load."""
    spec = importlib.machinery.PathFinder.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise TorchNotFoundError("no 'torch' package is importable from sys.path")
    return Path(next(iter(spec.submodule_search_locations)))


def read_torch_base(torch_dir: Path) -> TorchBase:
    """Read ``torch/version.py`` without executing it."""
    source = (torch_dir / "version.py").read_text(encoding="utf-8")
    values: dict[str, object] = {}
    for node in ast.parse(source).body:
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            values[target.id] = value.value
    version = str(values.get("__version__", "unknown"))
    return TorchBase(version.split("+", 1)[0], str(values.get("git_version", "unknown")))


def installed_torch_base() -> TorchBase:
    """The base of the torch that ``import torch`` would load."""
    return read_torch_base(torch_package_dir())
