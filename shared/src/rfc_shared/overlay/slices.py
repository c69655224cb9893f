"""Slice declarations: what one slice is and where its series lie.

A slice is a package that declares itself in the entry-point group
``torch_rfc.slices``::

    [project.entry-points."torch_rfc.slices"]
    rfc1 = "rfc1_identity:SLICE"

where ``SLICE`` is a :class:`Slice`. Its patch series lives in the package,
one folder per torch base (``patches/torch-<version>/``): ``git format-patch``
files, applied in the order the folder's ``series`` file lists them. The
folders are the slice's bases: nothing else lists them.
:class:`~rfc_shared.overlay.roster.Roster` holds the installed slices and
says what a selection of them means.
"""

from __future__ import annotations

import importlib.resources
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
class ProcessState:
    """Process-global state a slice's patches add to a torch module, which a
    test that registers a device must leave as it found it (the conformance
    kit's registry snapshot saves and restores it).

    Args:
        module: The torch module that holds it.
        values: Each attribute the snapshot saves and restores, with the
            value it has right after import.
        rebuild: A function of ``module`` that rebuilds what is derived from
            the registry, called after a restore (which bypasses the code
            that would otherwise call it).
    """

    module: str
    values: tuple[tuple[str, Any], ...] = ()
    rebuild: str = ""


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
        process_state: What its patches keep process-wide that a registry
            snapshot must save, restore or rebuild.
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
    process_state: tuple[ProcessState, ...] = field(default=(), compare=False)

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

    def touched_files(self, base: TorchBase) -> frozenset[str]:
        """The paths the series for ``base`` patches, read from the patches'
        ``diff --git`` lines (cheaper than parsing their hunks)."""
        found: set[str] = set()
        for path in self.series_files(base):
            found.update(_DIFF_PATH.findall(path.read_text(encoding="utf-8")))
        return frozenset(found)


_DIFF_PATH = re.compile(r"^diff --git a/\S+ b/(\S+)$", re.MULTILINE)
