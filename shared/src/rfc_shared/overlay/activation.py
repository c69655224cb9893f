"""Build the patched torch from the selected slices and make it importable.

An :class:`Overlay` is the pristine sources of the installed torch plus the
series of each selected slice, applied in stack order, entirely in memory.
Building it is all-or-nothing: any error (a torch that is not the series'
base, a hunk that does not apply, a missing dependency) raises before a single
module is served.

Activation happens on its own: ``torch_rfc_shared.pth`` arms a hook at
interpreter start, and the first ``import torch`` builds the overlay selected
by ``TORCH_RFC_SLICES`` (unset: every installed slice; ``none``: stock torch).
:func:`activate` does the same for a given selection, before torch is imported;
:class:`Activation` holds that state.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import selection
from . import buildcache, cachedirs
from .applier import HunkMismatchError, apply_hunks
from .base import TorchBase, installed_torch_base, read_torch_base, torch_package_dir
from .finder import OverlayFinder, forget_sources
from .patchfile import PatchFormatError
from .roster import Roster, installed, loading
from .slices import Slice, SliceError


class OverlayError(SliceError):
    """The overlay cannot be built or activated; nothing was patched."""


class PatchApplyError(OverlayError):
    """A hunk of a slice's series does not apply to the torch sources."""

    def __init__(self, slice_name: str, patch: str, target: str, detail: str) -> None:
        super().__init__(
            f"slice {slice_name!r}: patch {patch}: {target}: {detail}. "
            f"No module of slice {slice_name!r} was patched."
        )
        self.slice_name = slice_name
        self.patch = patch
        self.target = target


#: Where a patch's own tests live, as in a PyTorch checkout. They are applied
#: like any file but never served: :attr:`Overlay.tests` holds them.
TESTS_DIR = "test/"


@dataclass(frozen=True)
class PatchedFile:
    """A file of the patched tree: a torch source file the overlay serves, or
    an upstream test file a patch carries."""

    path: str
    text: str
    is_new: bool
    slices: tuple[str, ...]

    @property
    def module_name(self) -> str:
        parts = self.path.removesuffix(".py").split("/")
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)


def _series_hash(base: TorchBase, slices: Sequence[Slice]) -> str:
    """The overlay's identity: the torch base and each slice's patches, bytes
    and order (the name of its Inductor cache directory, its stored build)."""
    digest = hashlib.sha256(f"{base.version}\0{base.git_version}\0".encode())
    for s in slices:
        digest.update(f"{s.name}\0".encode())
        for path in s.series_files(base):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _pristine_path(base: TorchBase, site_dir: Path, path: str) -> Path:
    """Where ``path``'s pristine file is: upstream tests are not in a torch
    installation, so a patch creates them or changes one the project keeps
    for the base."""
    root = base.landed_tests_dir if path.startswith(TESTS_DIR) else site_dir
    return root / path


def _module_path_error(path: str) -> str | None:
    if path.startswith(TESTS_DIR):
        return None if path.endswith(".py") else "only .py test files are supported"
    if not path.startswith("torch/"):
        return f"only files under torch/ and {TESTS_DIR} can be overlaid"
    if not path.endswith(".py"):
        return "only .py files can be served in memory (use materialize for others)"
    return None


@dataclass(frozen=True)
class Overlay:
    """A built overlay: which slices, on which torch, and the patched files."""

    base: TorchBase
    slices: tuple[Slice, ...]
    files: Mapping[str, PatchedFile]
    site_dir: Path
    series_hash: str

    @property
    def modules(self) -> dict[str, PatchedFile]:
        """The torch modules served, by module name."""
        return {f.module_name: f for f in self.files.values() if f.path.startswith("torch/")}

    @property
    def tests(self) -> dict[str, PatchedFile]:
        """The upstream test files the series carry, by path (``test/...``)."""
        return {p: f for p, f in self.files.items() if p.startswith(TESTS_DIR)}

    @classmethod
    def build(cls, slices: Sequence[Slice], torch_dir: Path | None = None) -> Overlay:
        """Apply ``slices`` (already in stack order) to the pristine sources.

        Raises:
            BaseMismatchError: the installed torch is not a slice's base.
            PatchApplyError: naming slice, patch, file and hunk.
            OverlayError: a dependency that is not applied before its slice.
        """
        torch_dir = torch_package_dir() if torch_dir is None else torch_dir
        site_dir = torch_dir.parent
        base = read_torch_base(torch_dir)
        applied: list[str] = []
        for s in slices:
            missing = [d for d in s.requires if d not in applied]
            if missing:
                raise OverlayError(
                    f"slice {s.name!r} requires {', '.join(map(repr, missing))}, "
                    "which is not applied before it"
                )
            applied.append(s.name)
        series_hash = _series_hash(base, slices)
        built = cls._built(base, slices, site_dir, series_hash)
        return cls(base, tuple(slices), built, site_dir, series_hash)

    @classmethod
    def _built(
        cls, base: TorchBase, slices: Sequence[Slice], site_dir: Path, series_hash: str
    ) -> dict[str, PatchedFile]:
        """The patched files: as an earlier build of the same series on the
        same sources stored them (:mod:`.buildcache`), else applied now."""

        def pristine(path: str) -> Path:
            return _pristine_path(base, site_dir, path)

        stored = buildcache.load(series_hash, site_dir, pristine)
        if stored is not None:
            return {path: PatchedFile(path, *rest) for path, *rest in stored}
        files: dict[str, PatchedFile] = {}
        for s in slices:
            files = cls._apply_slice(s, base, site_dir, files)
        buildcache.store(
            series_hash,
            site_dir,
            ((f.path, f.text, f.is_new, f.slices) for f in files.values()),
            pristine,
        )
        return files

    @staticmethod
    def _apply_slice(
        s: Slice,
        base: TorchBase,
        site_dir: Path,
        files: Mapping[str, PatchedFile],
    ) -> dict[str, PatchedFile]:
        try:
            series = s.series(base)
        except PatchFormatError as e:
            raise OverlayError(f"slice {s.name!r}: {e}") from e
        staged = dict(files)
        for patch in series:
            for diff in patch.files:
                problem = _module_path_error(diff.path)
                if problem:
                    raise PatchApplyError(s.name, patch.name, diff.path, problem)
                current = staged.get(diff.path)
                pristine = _pristine_path(base, site_dir, diff.path)
                if diff.is_new:
                    if current is not None or pristine.exists():
                        raise PatchApplyError(
                            s.name, patch.name, diff.path, "creates a file that exists"
                        )
                    text = ""
                elif current is not None:
                    text = current.text
                elif pristine.is_file():
                    text = pristine.read_text(encoding="utf-8")
                else:
                    raise PatchApplyError(s.name, patch.name, diff.path, "file not found in torch")
                try:
                    patched = apply_hunks(text, diff.hunks)
                except HunkMismatchError as e:
                    raise PatchApplyError(s.name, patch.name, diff.path, str(e)) from e
                staged[diff.path] = PatchedFile(
                    diff.path,
                    patched,
                    diff.is_new or (current is not None and current.is_new),
                    (current.slices if current else ()) + (s.name,),
                )
        return staged

    def describe(self) -> dict[str, Any]:
        """What this overlay is, as plain data."""
        return {
            "torch": {"version": self.base.version, "git_version": self.base.git_version},
            "slices": [{"name": s.name, "version": s.version} for s in self.slices],
            "series_hash": self.series_hash,
            "modules": sorted(self.modules),
        }


class Activation:
    """The overlay's state in one process: which overlay serves torch, the
    finder that serves it, and what the startup hook learned.

    The process has one (:data:`ACTIVATION`); the module functions below act
    on it. :meth:`activate` serves an overlay to later imports and
    :meth:`deactivate` stops serving it (modules already imported stay as
    they are); :meth:`activated` is both, as a context manager.

    Args:
        roster: The slices to choose from (default: the installed ones,
            :func:`rfc_shared.overlay.roster.installed`, read when first
            needed).
    """

    def __init__(self, roster: Roster | None = None) -> None:
        self._roster = roster
        self.overlay: Overlay | None = None
        self.finder: OverlayFinder | None = None
        self.cache_dirs: dict[str, str] = {}
        # Installed, selected by "all", with no series for this torch.
        self.left_out: list[str] = []
        # The startup hook's outcome: the environment was read (nothing more
        # to do on import), or activating failed (raised on every import).
        self.settled = False
        self.failure: BaseException | None = None
        # Patched modules still imported after deactivate(): Python cannot
        # unimport them, so report() names them.
        self.still_imported: list[str] = []
        self._environ_before: str | None = None
        self._activating = False

    def report(self) -> dict[str, Any]:
        """What is active: slices and versions, series hash, patched modules
        and the cache directories the overlay chose (empty when the user set
        them)."""
        if self.overlay is None:
            inactive = {"active": False, "slices": [], "requested": os.environ.get(selection.ENV)}
            if self.still_imported:
                inactive["patched_modules_still_imported"] = list(self.still_imported)
            return inactive
        return {
            "active": True,
            **self.overlay.describe(),
            "cache_dirs": dict(self.cache_dirs),
            "not_on_this_torch": list(self.left_out),
        }

    def activate(
        self,
        names: Sequence[str] | None = None,
        *,
        replacing: object | None = None,
    ) -> Overlay:
        """Build the overlay for ``names`` and serve it to later imports.

        Args:
            names: Slice names; the slices they require are added. None
                selects every installed slice that has a series for the
                installed torch (:meth:`report` names the others); a name
                given explicitly must have one.
            replacing: A ``sys.meta_path`` entry the overlay's finder takes
                the place of (the startup hook's).

        Raises:
            OverlayError: another overlay is already active, or a module it
                would patch was imported already (activate before importing
                torch).
            SliceError: an unknown slice or a missing dependency.
            BaseMismatchError: a selected slice has no series for the
                installed torch, or (selecting all) no installed slice has.
        """
        if self._activating:
            culprit = loading()
            raise OverlayError(
                "torch was imported while the overlay was being activated: "
                + (f"slice {culprit[0]!r} ({culprit[1]})" if culprit else "a slice's package")
                + " (or what it imports) imports torch, which the overlay must patch first; "
                "import torch inside the slice's functions instead"
            )
        self._activating = True
        try:
            return self._activate(names, replacing)
        finally:
            self._activating = False

    @property
    def roster(self) -> Roster:
        """The slices this activation chooses from."""
        return self._roster if self._roster is not None else installed()

    def _activate(self, names: Sequence[str] | None, replacing: object | None) -> Overlay:
        roster = self.roster
        slices = roster.select(names, installed_torch_base())
        left_out = [
            n for n in roster.names() if names is None and n not in {s.name for s in slices}
        ]
        if self.overlay is not None:
            if [s.name for s in self.overlay.slices] == [s.name for s in slices]:
                return self.overlay
            raise OverlayError(
                "an overlay is already active in this process "
                f"({', '.join(s.name for s in self.overlay.slices)})"
            )
        overlay = Overlay.build(slices)
        imported = sorted(m for m in overlay.modules if m in sys.modules)
        if imported:
            raise OverlayError(
                f"cannot patch modules that are already imported: {', '.join(imported)}; "
                "activate the overlay before importing torch"
            )
        finder = OverlayFinder(
            overlay.site_dir, {m: (f.path, f.text) for m, f in overlay.modules.items()}
        )
        if replacing is not None and replacing in sys.meta_path:
            # Swapped in place: the import system may be iterating sys.meta_path.
            sys.meta_path[sys.meta_path.index(replacing)] = finder
        else:
            sys.meta_path.insert(0, finder)
        # Compile workers and other subprocesses inherit the same overlay.
        self._environ_before = os.environ.get(selection.ENV)
        os.environ[selection.ENV] = ",".join(s.name for s in overlay.slices)
        self.cache_dirs.update(cachedirs.namespace(overlay.series_hash))
        self.overlay, self.finder = overlay, finder
        self.still_imported.clear()
        self.left_out[:] = left_out
        return overlay

    def deactivate(self) -> None:
        """Undo :meth:`activate`: stop serving the overlay to later imports,
        give subprocesses the selection and Inductor cache directory they had
        before, give linecache back the stdlib's behaviour and forget the
        startup hook's outcome. Modules the overlay served stay imported
        (Python cannot unimport them): linecache keeps their patched text,
        and :meth:`report` names them."""
        if self.finder is not None and self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        if self.overlay is not None and self.finder is not None:
            if self._environ_before is None:
                os.environ.pop(selection.ENV, None)
            else:
                os.environ[selection.ENV] = self._environ_before
            for key, value in self.cache_dirs.items():
                if os.environ.get(key) == value:  # unless changed since
                    os.environ.pop(key)
            self.still_imported = sorted(m for m in self.overlay.modules if m in sys.modules)
            forget_sources(
                {self.finder.filename(m) for m in self.overlay.modules if m not in sys.modules}
            )
        self.overlay = self.finder = None
        self.cache_dirs.clear()
        self.left_out.clear()
        self.settled = False
        self.failure = None

    @contextlib.contextmanager
    def activated(self, names: Sequence[str] | None = None) -> Iterator[Overlay]:
        """:meth:`activate`, then :meth:`deactivate` on the way out."""
        overlay = self.activate(names)
        try:
            yield overlay
        finally:
            self.deactivate()

    def on_torch_import(self, hook: object) -> OverlayFinder | None:
        """Called by the startup hook on the first ``torch`` import.

        Activates what ``TORCH_RFC_SLICES`` selects. A failure is remembered
        and raised again on every later attempt to import torch: a broken
        overlay never silently falls back to stock torch.
        """
        if self.overlay is not None or self.settled:
            return self.finder
        if self.failure is not None:
            raise OverlayError(f"the torch overlay failed to activate: {self.failure}")
        try:
            names = selection.current()
            if names != []:
                self.activate(names, replacing=hook)
        except BaseException as e:
            self.failure = e
            raise
        self.settled = True
        return self.finder


#: The process's overlay state.
ACTIVATION = Activation()


def active() -> Overlay | None:
    """The overlay serving torch in this process, or None for stock torch."""
    return ACTIVATION.overlay


def report() -> dict[str, Any]:
    """What is active (:meth:`Activation.report`)."""
    return ACTIVATION.report()


def activate(names: Sequence[str] | None = None) -> Overlay:
    """Build the overlay for ``names`` and serve it (:meth:`Activation.activate`)."""
    return ACTIVATION.activate(names)


def deactivate() -> None:
    """Stop serving the overlay to later imports (:meth:`Activation.deactivate`)."""
    ACTIVATION.deactivate()


def activate_on_torch_import(hook: object) -> OverlayFinder | None:
    """The startup hook's entry (:meth:`Activation.on_torch_import`)."""
    return ACTIVATION.on_torch_import(hook)
