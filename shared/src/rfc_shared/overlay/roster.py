"""The installed slices as one object, checked once.

Modelled on pluggy's ``PluginManager``: a :class:`Roster` is built once per
process from the ``torch_rfc.slices`` entry points (:func:`installed`), or
from given slices in a test (``Roster([...])``), and everything that asks
which slices there are, in which order they stack, what a selection or a
conformance-matrix column applies, or which slice a probe belongs to asks it.

What it checks when built:

- every slice a slice ``requires`` is shipped by the same distribution or by
  one that the requiring distribution's metadata (``Requires-Dist``) names,
  so that installing a slice brings the slices it needs (versions are pip's
  business; the names are typed twice, in ``Slice(...)`` and
  ``pyproject.toml``, and must agree);
- ``requires`` and ``stack_after`` form no cycle.

And when a stack is selected for a base: two slices whose series there patch
a common file are ordered by declaration (``requires`` or ``stack_after``,
directly or through other installed slices), never by their names.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from .. import selection
from .base import TorchBase
from .slices import ENTRY_POINT_GROUP, Slice, SliceError


class DeclarationError(SliceError):
    """Slices whose declarations contradict each other or their metadata."""


#: Matrix columns that are not a slice: stock torch and every slice stacked.
STOCK, STACKED = "stock", "stacked"


@dataclass(frozen=True)
class Distribution:
    """What a slice's installed distribution says of it.

    Args:
        name: The distribution's normalized name (``torch-rfc1-identity``).
        requires: The normalized names its metadata requires.
    """

    name: str
    requires: frozenset[str] = frozenset()

    @classmethod
    def of(cls, dist: importlib.metadata.Distribution) -> Distribution:
        needed = (r for r in dist.requires or () if "extra ==" not in r)
        return cls(_normalized(dist.metadata["Name"]), frozenset(map(_requirement_name, needed)))


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return _normalized(found[1]) if found else requirement


class Roster:
    """The slices, in stack order, and what their declarations mean.

    Args:
        slices: The slices to hold.
        distributions: Each slice's distribution, by slice name; without
            one, a slice's ``requires`` is not checked against metadata.

    Raises:
        DeclarationError: two slices of one name, a cycle, or a ``requires``
            the distribution's metadata does not back.
    """

    def __init__(
        self, slices: Iterable[Slice], distributions: dict[str, Distribution] | None = None
    ) -> None:
        slices = list(slices)
        names = [s.name for s in slices]
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise DeclarationError(f"two installed packages declare slice {twice[0]!r}")
        self._distributions = dict(distributions or {})
        self._slices = {s.name: s for s in _stack_order(slices)}
        self._after = {n: self._transitively_after(n) for n in self._slices}
        self._check_requires()

    @classmethod
    def from_entry_points(cls) -> Roster:
        """Every slice the environment's distributions declare."""
        found: list[Slice] = []
        distributions: dict[str, Distribution] = {}
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            _loading.append((ep.name, ep.value))
            try:
                declared = ep.load()
            finally:
                _loading.pop()
            if not isinstance(declared, Slice):
                raise DeclarationError(
                    f"entry point {ep.name} = {ep.value} is a "
                    f"{type(declared).__name__}, not a rfc_shared.overlay.slices.Slice"
                )
            if declared.name != ep.name:
                raise DeclarationError(
                    f"entry point {ep.name!r} declares a slice named {declared.name!r}"
                )
            if ep.dist is not None:
                declared = dataclasses.replace(declared, version=ep.dist.version)
                distributions[ep.name] = Distribution.of(ep.dist)
            found.append(declared)
        return cls(found, distributions)

    # What it holds.

    def __contains__(self, name: object) -> bool:
        return name in self._slices

    def __getitem__(self, name: str) -> Slice:
        return self._slices[name]

    def __iter__(self) -> Iterator[Slice]:
        return iter(self._slices.values())

    def __len__(self) -> int:
        return len(self._slices)

    def names(self) -> list[str]:
        """The slice names, in stack order."""
        return list(self._slices)

    def main(self) -> list[Slice]:
        """The slices that are not follow-ups: the conformance matrix's
        columns, the docs' slice pages, one nox session each."""
        return [s for s in self if not s.followup_of]

    def mapped(self, change: Callable[[Slice], Slice]) -> Roster:
        """The same roster with each slice changed (say, read from a source
        tree); the stack order and distributions are kept."""
        return self._sub([change(s) for s in self])

    def narrowed(self, names: Sequence[str] | None) -> Roster:
        """The roster of :meth:`closure`'s slices."""
        return self._sub(self.closure(names))

    def on(self, base: TorchBase) -> Roster:
        """The slices that can apply to ``base``: each has a series for it,
        and so does every slice it requires."""
        usable = {n: s for n, s in self._slices.items() if base in s.bases}
        changed = True
        while changed:
            changed = False
            for name, s in list(usable.items()):
                if any(r not in usable for r in s.requires):
                    del usable[name]
                    changed = True
        return self._sub(usable.values())

    # Selections.

    def closure(self, names: Sequence[str] | None) -> list[Slice]:
        """The named slices plus everything they require, in stack order.

        Args:
            names: Slice names, as :func:`rfc_shared.selection.parse` returns
                them; None is every slice.

        Raises:
            SliceError: a name that is not here, or a missing dependency.
        """
        chosen: set[str] = set()
        pending = list(self._slices if names is None else names)
        while pending:
            name = pending.pop()
            if name in chosen:
                continue
            if name not in self._slices:
                known = ", ".join(self._slices) or "none"
                raise SliceError(f"slice {name!r} is not installed (installed: {known})")
            chosen.add(name)
            for dep in self._slices[name].requires:
                if dep not in self._slices:
                    raise SliceError(
                        f"slice {name!r} requires slice {dep!r}, which is not installed"
                    )
                pending.append(dep)
        return [s for n, s in self._slices.items() if n in chosen]

    def select(self, names: Sequence[str] | None, base: TorchBase) -> list[Slice]:
        """What a selection serves on ``base``, in stack order.

        ``names`` as :func:`rfc_shared.selection.parse` returns them: None is
        every slice that can apply to ``base`` (:meth:`on`), ``[]`` is none;
        named slices bring the slices they require.

        Raises:
            SliceError: an unknown slice or a missing dependency.
            BaseMismatchError: selecting all, slices are installed but none
                has a series for ``base``.
            DeclarationError: two selected slices patch a common file and no
                declaration orders them.
        """
        if names == []:
            return []
        pool = self
        if names is None:
            pool = self.on(base)
            if self and not pool:
                next(iter(self)).series_dir(base)  # raises, naming both
        stack = pool.closure(names)
        self.check_order(stack, base)
        return stack

    def check_order(self, stack: Sequence[Slice], base: TorchBase) -> None:
        """Refuse two slices of ``stack`` that patch a common file on
        ``base`` with no declaration saying which goes first: their order
        would then be their names' (a later series applied to another
        preimage when a slice is renamed or added).

        Raises:
            DeclarationError: naming both slices and the file.
        """
        touched = {s.name: s.touched_files(base) for s in stack if base in s.bases}
        for first, second in itertools.combinations(touched, 2):
            common = touched[first] & touched[second]
            ordered = first in self._after[second] or second in self._after[first]
            if common and not ordered:
                raise DeclarationError(
                    f"slices {first!r} and {second!r} both patch {min(common)} on {base} "
                    "and neither declares the other in requires or stack_after: add the one "
                    "that goes first to the other's stack_after"
                )

    # The conformance matrix's columns.

    def columns(self, base: TorchBase) -> list[str]:
        """``stock``, each main slice with a series for ``base`` in stack
        order, ``stacked``. Follow-ups get no column: each is one upstream PR
        beyond its slice's asks, in the ``stacked`` column."""
        return [STOCK, *(s.name for s in self.main() if base in s.bases), STACKED]

    def column(self, name: str) -> frozenset[str]:
        """The slices a column applies: none for ``stock``, all for
        ``stacked`` (or a column that is no slice here), else the slice and
        those it requires."""
        if name == STOCK:
            return frozenset()
        if name == STACKED or name not in self._slices:
            return frozenset(self._slices)
        return frozenset(s.name for s in self.closure([name]))

    def column_of(self, applied: Sequence[Slice]) -> str:
        """The column a process with ``applied`` stands for: ``stock``, the
        one slice whose closure is what is applied, or ``stacked``."""
        names = {s.name for s in applied}
        if not names:
            return STOCK
        for s in reversed(applied):
            if self.column(s.name) == names:
                return s.name
        return STACKED

    @staticmethod
    def column_selection(column: str) -> str:
        """The ``TORCH_RFC_SLICES`` value that serves ``column``."""
        return {STOCK: selection.NONE, STACKED: selection.ALL}.get(column, column)

    # Probes and process state.

    def check_probe(self, probe: str, package: str) -> None:
        """Refuse a probe whose prefix is not a slice ``package`` declares.

        Raises:
            DeclarationError: naming the probe, its package and their slices.
        """
        own = [s.name for s in self if s.package == package]
        if probe.split(".", 1)[0] not in own:
            raise DeclarationError(
                f"probe {probe!r} is registered by {package}.probes, whose slices are "
                f"{', '.join(own) or 'none'}: name it <slice>.<site> after one of them"
            )

    # Construction helpers.

    def _sub(self, slices: Iterable[Slice]) -> Roster:
        sub = object.__new__(Roster)
        kept = {s.name: s for s in slices}
        sub._distributions = {n: d for n, d in self._distributions.items() if n in kept}
        sub._slices = {n: kept[n] for n in self._slices if n in kept}
        sub._after = {n: self._after[n] & kept.keys() for n in sub._slices}
        return sub

    def _transitively_after(self, name: str) -> frozenset[str]:
        found: set[str] = set()
        pending = list(_declared_before(self._slices[name]))
        while pending:
            other = pending.pop()
            if other in found or other not in self._slices:
                continue
            found.add(other)
            pending += _declared_before(self._slices[other])
        return frozenset(found)

    def _check_requires(self) -> None:
        for s in self:
            mine = self._distributions.get(s.name)
            for dep in s.requires:
                theirs = self._distributions.get(dep)
                if mine is None or theirs is None or theirs.name in (mine.name, *mine.requires):
                    continue
                raise DeclarationError(
                    f"slice {s.name!r} requires slice {dep!r}, which {theirs.name} ships, but "
                    f"{mine.name}'s metadata does not require {theirs.name}: add it to the "
                    "dependencies in its pyproject.toml"
                )


def _declared_before(s: Slice) -> tuple[str, ...]:
    return (*s.requires, *s.stack_after)


def _stack_order(slices: Iterable[Slice]) -> list[Slice]:
    """Required and ``stack_after`` slices first; where neither orders two
    slices their names do, which :meth:`Roster.check_order` allows only for
    slices that patch no common file."""
    pending = sorted(slices, key=lambda s: s.name)
    names = {s.name for s in pending}
    placed: list[Slice] = []
    done: set[str] = set()
    while pending:
        for s in pending:
            if all(d in done or d not in names for d in _declared_before(s)):
                break
        else:
            cycle = ", ".join(s.name for s in pending)
            raise DeclarationError(f"slices require each other in a cycle: {cycle}")
        pending.remove(s)
        placed.append(s)
        done.add(s.name)
    return placed


# The entry points being loaded: a slice whose package imports torch re-enters
# the overlay's activation from here, and the error names it.
_loading: list[tuple[str, str]] = []


def loading() -> tuple[str, str] | None:
    """The slice name and entry point being loaded now, if one is."""
    return _loading[-1] if _loading else None


@functools.cache
def installed() -> Roster:
    """This process's roster, built from the entry points on first use."""
    return Roster.from_entry_points()
