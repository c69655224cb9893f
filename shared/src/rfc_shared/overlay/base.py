"""The upstream torch a patch series is written against, and the one installed.

Reading the installed torch's version never imports torch: the overlay has to
decide what to patch before the first ``torch`` module is executed.
"""

from __future__ import annotations

import ast
import importlib.machinery
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


#: The file that names every base, with its role (see its header).
BASES_FILE = Path(__file__).parents[1] / "bases.toml"
ROLES = ("primary", "backport", "gpu")


@dataclass(frozen=True, order=True)
class TorchBase:
    """A torch release identified by its public version and upstream commit.

    ``role`` and ``requirements`` say how the project uses a known base
    (:data:`BASES_FILE`); they do not take part in comparisons, so a base read
    from an installed torch equals the known one.
    """

    version: str
    git_version: str
    role: str = field(default="", compare=False)
    requirements: tuple[str, ...] = field(default=(), compare=False)

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


class UnknownBaseError(ValueError):
    """A torch version that is not one of :data:`KNOWN_BASES`."""


def read_bases(path: Path = BASES_FILE) -> tuple[TorchBase, ...]:
    """The bases ``path`` declares, primary first.

    Raises:
        ValueError: the file does not declare exactly one primary base, or an
            entry lacks a field or has an unknown role.
    """
    with path.open("rb") as f:
        entries = tomllib.load(f).get("base", [])
    bases = []
    for entry in entries:
        try:
            base = TorchBase(
                entry["version"],
                entry["git_version"],
                entry["role"],
                tuple(entry.get("requirements", ())),
            )
        except KeyError as e:
            raise ValueError(f"{path}: a [[base]] entry has no {e.args[0]!r}") from None
        if base.role not in ROLES:
            raise ValueError(f"{path}: {base.version} has role {base.role!r}, not one of {ROLES}")
        bases.append(base)
    primaries = [b for b in bases if b.role == "primary"]
    if len(primaries) != 1:
        raise ValueError(f"{path}: {len(primaries)} primary bases, not one")
    return tuple(sorted(bases, key=lambda b: b.role != "primary"))


#: Every base a series may be ported to, primary first.
KNOWN_BASES = read_bases()
#: The newest release: what a slice's upstream PR is cut against.
PRIMARY_BASE = KNOWN_BASES[0]


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
