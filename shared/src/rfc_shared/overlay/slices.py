"""Slice declarations, their discovery through entry points, and selection.

A slice is a package that declares itself in the entry-point group
``torch_rfc.slices``::

    [project.entry-points."torch_rfc.slices"]
    rfc1 = "rfc1_identity:SLICE"

where ``SLICE`` is a :class:`Slice`. Its patch series lives in the package,
one folder per torch base (``patches/torch-<version>/``): ``git format-patch``
files, applied in the order the folder's ``series`` file lists them. The
folders are the slice's bases: nothing else lists them.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.resources
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import base as base_module
from .base import TorchBase, UnknownBaseError, known_base


if TYPE_CHECKING:
    from .patchfile import Patch


ENTRY_POINT_GROUP = "torch_rfc.slices"
SERIES_FILE = "series"
FOLLOWUPS_FOLDER = "followups"


class SliceError(RuntimeError):
    """A slice that cannot be found, resolved or applied."""


class BaseMismatchError(SliceError):
    """The installed torch is not a base the slice has a series for."""


@dataclass(frozen=True)
class Slice:
    """A sub-RFC's patch series and what it needs.

    Args:
        name: The slice's short name (``rfc1``); names the nox session and
            the ``TORCH_RFC_SLICES`` value.
        package: The import name of the package holding ``patches/``.
        bases: The torch releases the slice has a series for; by default,
            those of its series folders (``torch-<version>/`` with a
            ``series`` file).
        requires: Names of slices that must be applied first; the slice's
            series is cut against their postimages.
        title: One line saying what the slice changes.
        stack_after: Names of slices that, when they are applied too, go
            before this one (an order among independent slices, so that a
            stacked overlay is the same whatever the selection).
        patches_folder: The package folder holding the series (default:
            ``patches``, and ``followups/<name>`` for a follow-up).
        followup_of: For a follow-up PR, the slice it follows: what a backend
            met beyond that slice's RFC asks, one upstream PR per follow-up,
            reviewed and exported alone. A follow-up lives in the package of
            the slice it follows, requires only what its code needs (the
            slice it follows, or less: a fix that applies to the base alone
            requires nothing), and has no conformance column or nox session
            of its own (``nox -s followups`` tests each alone).
        issue: The upstream thread the slice answers (``#189135``, or
            ``beyond #189137`` for what goes past an RFC's asks).
        summary: What it changes, in a line of Markdown: the README's and the
            docs index's tables show it (``python -m rfc_shared tables``).
    """

    name: str
    package: str
    bases: tuple[TorchBase, ...] | None = None
    requires: tuple[str, ...] = ()
    title: str = ""
    version: str = field(default="0+unknown", compare=False)
    patches_root: Path | None = field(default=None, compare=False, repr=False)
    stack_after: tuple[str, ...] = ()
    patches_folder: str = "patches"
    issue: str = ""
    summary: str = ""
    followup_of: str = ""

    def __post_init__(self) -> None:
        if self.followup_of:
            if self.followup_of == self.name:
                raise SliceError(f"slice {self.name!r} cannot be a follow-up of itself")
            if self.patches_folder == "patches":
                object.__setattr__(self, "patches_folder", f"{FOLLOWUPS_FOLDER}/{self.name}")
        if self.bases is None:
            object.__setattr__(self, "bases", self._series_bases())

    def _series_bases(self) -> tuple[TorchBase, ...]:
        """The known bases the series folders are for, in declared order.

        Raises:
            SliceError: a series folder for a base the project does not know.
        """
        folders = [d for d in self.patches_dir().glob("torch-*") if (d / SERIES_FILE).is_file()]
        found = []
        for folder in folders:
            try:
                found.append(known_base(folder.name.removeprefix("torch-")))
            except UnknownBaseError as e:
                raise SliceError(
                    f"slice {self.name!r}: {folder} is a series for an unknown base ({e}); "
                    "declare the base in rfc_shared/bases.toml"
                ) from None
        # In the order bases.toml declares them: the primary first.
        declared = base_module.KNOWN_BASES
        return tuple(sorted(found, key=declared.index))

    def patches_dir(self) -> Path:
        if self.patches_root is not None:
            return self.patches_root
        return Path(str(importlib.resources.files(self.package) / self.patches_folder))

    def series_dir(self, base: TorchBase) -> Path:
        """The folder of the series written against ``base``.

        Raises:
            BaseMismatchError: the slice has no series for ``base``.
        """
        for known in self.bases:
            if known == base:
                return self.patches_dir() / known.series_dir_name
        wanted = ", ".join(str(b) for b in self.bases) or "none"
        raise BaseMismatchError(
            f"slice {self.name!r} {self.version} has no patch series for the "
            f"installed {base}; it was written against: {wanted}. Install a "
            "matching torch, or disable the overlay with TORCH_RFC_SLICES=none."
        )

    def series_files(self, base: TorchBase) -> list[Path]:
        """The patch files for ``base``, in the order the ``series`` file lists.

        Raises:
            SliceError: the ``series`` file is missing, names a patch that is
                not there, or leaves out one that is (a packaging mistake).
        """
        folder = self.series_dir(base)
        listing = folder / SERIES_FILE
        if not listing.is_file():
            raise SliceError(f"slice {self.name!r}: {listing} is missing")
        names = [
            line.strip()
            for line in listing.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
        present = {p.name for p in folder.glob("*.patch")}
        if sorted(names) != sorted(present):
            raise SliceError(
                f"slice {self.name!r}: {listing} lists {sorted(names)} but the folder "
                f"holds {sorted(present)}"
            )
        return [folder / n for n in names]

    def series(self, base: TorchBase) -> list[Patch]:
        """The slice's patches for ``base``, in application order."""
        from .patchfile import read_patch

        return [read_patch(p) for p in self.series_files(base)]


def discover_slices() -> dict[str, Slice]:
    """Every installed slice, by name."""
    found: dict[str, Slice] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        declared = ep.load()
        if not isinstance(declared, Slice):
            raise SliceError(
                f"entry point {ep.name} = {ep.value} is a "
                f"{type(declared).__name__}, not a rfc_shared.overlay.slices.Slice"
            )
        if declared.name != ep.name:
            raise SliceError(f"entry point {ep.name!r} declares a slice named {declared.name!r}")
        if ep.name in found:
            raise SliceError(f"two installed packages declare slice {ep.name!r}")
        if ep.dist is not None:
            declared = dataclasses.replace(declared, version=ep.dist.version)
        found[ep.name] = declared
    return found


def main_slices(slices: Iterable[Slice]) -> list[Slice]:
    """The slices that are not follow-ups: the conformance matrix's columns,
    the docs' slice pages, one nox session each."""
    return [s for s in slices if not s.followup_of]


def stack_order(slices: Iterable[Slice]) -> list[Slice]:
    """Required and ``stack_after`` slices first; ties broken by name."""
    pending = sorted(slices, key=lambda s: s.name)
    names = {s.name for s in pending}
    placed: list[Slice] = []
    done: set[str] = set()
    while pending:
        for s in pending:
            if all(d in done or d not in names for d in (*s.requires, *s.stack_after)):
                break
        else:
            cycle = ", ".join(s.name for s in pending)
            raise SliceError(f"slices require each other in a cycle: {cycle}")
        pending.remove(s)
        placed.append(s)
        done.add(s.name)
    return placed


def for_base(installed: Mapping[str, Slice], base: TorchBase) -> dict[str, Slice]:
    """The installed slices that can apply to ``base``: each has a series for
    it, and so does every slice it requires."""
    usable = {n: s for n, s in installed.items() if base in s.bases}
    changed = True
    while changed:
        changed = False
        for name, s in list(usable.items()):
            if any(r not in usable for r in s.requires):
                del usable[name]
                changed = True
    return usable


def select(
    names: Sequence[str] | None, installed: Mapping[str, Slice], base: TorchBase
) -> list[Slice]:
    """What a selection serves on ``base``, in stack order.

    ``names`` as :func:`rfc_shared.selection.parse` returns them: None is every
    installed slice that has a series for ``base`` (:func:`for_base`), ``[]``
    is none; named slices bring the slices they require.

    Raises:
        SliceError: an unknown slice or a missing dependency.
        BaseMismatchError: selecting all, slices are installed but none has a
            series for ``base``.
    """
    if names == []:
        return []
    if names is None:
        usable = for_base(installed, base)
        if installed and not usable:
            next(iter(installed.values())).series_dir(base)  # raises, naming both
        installed = usable
    return resolve(names, installed)


def resolve(selection: Sequence[str] | None, installed: Mapping[str, Slice]) -> list[Slice]:
    """The selected slices plus everything they require, in stack order.

    Args:
        selection: Slice names, as :func:`rfc_shared.selection.parse` returns
            them; None selects every installed slice.
        installed: The slices to choose from, by name.

    Raises:
        SliceError: a name that is not installed, or a missing dependency.
    """
    chosen: dict[str, Slice] = {}
    pending = list(installed if selection is None else selection)
    while pending:
        name = pending.pop()
        if name in chosen:
            continue
        if name not in installed:
            known = ", ".join(s.name for s in stack_order(installed.values())) or "none"
            raise SliceError(f"slice {name!r} is not installed (installed: {known})")
        chosen[name] = installed[name]
        for dep in installed[name].requires:
            if dep not in installed:
                raise SliceError(f"slice {name!r} requires slice {dep!r}, which is not installed")
            pending.append(dep)
    return stack_order(chosen.values())
