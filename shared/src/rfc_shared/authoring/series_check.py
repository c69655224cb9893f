"""``check-series``: every series in the project applied to its base's
pristine sources, and the primary base served by every slice."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..overlay import Overlay
from ..overlay import base as base_module
from ..overlay.base import TorchBase
from ..overlay.roster import Roster, installed
from ..overlay.slices import Slice, SliceError
from . import pristine
from .workflow import project_root, source_roster


def check_series(
    root: Path | None = None, names: Sequence[str] | None = None, roster: Roster | None = None
) -> list[str]:
    """Apply every series in the project to its base's pristine sources:
    each slice alone (with its dependencies) and all of a base's slices
    stacked. Returns one line per check.

    Args:
        root: The project folder (default: found from the working directory).
        names: The slices to check, with their dependencies (default: all
            of ``roster``).
        roster: The slices (default: the installed ones).

    Raises:
        SliceError: a series does not apply, or a slice has none for the
            primary base (a new release is declared a backport until every
            slice is ported to it); it lists every check and then every
            failure.
    """
    root = project_root(root)
    slices = source_roster(root, (roster or installed()).narrowed(names or None))
    bases = dict.fromkeys(b for s in slices for b in s.bases)
    lines, failures = [], []
    primary = base_module.KNOWN_BASES[0]
    for s in slices:
        if primary not in s.bases:
            lines.append(f"{primary}: {s.name} has no series")
            failures.append(
                f"{primary}: slice {s.name!r} has no series for the primary base: port it "
                f"(workspace --base {primary.version}, then refresh --base {primary.version}) "
                "before the base is promoted"
            )

    def check(label: str, stack: Sequence[Slice], base: TorchBase, torch_dir: Path) -> None:
        try:
            slices.check_order(stack, base)
            overlay = Overlay.build(stack, torch_dir)
        except SliceError as e:
            failures.append(f"{label}: {e}")
            lines.append(f"{label} FAILS")
        else:
            lines.append(f"{label} applies ({len(overlay.files)} files)")

    for base in bases:
        torch_dir = pristine.sources_dir(base)
        ported = slices.on(base)
        for name in ported.names():
            check(f"{base}: {name}", ported.closure([name]), base, torch_dir)
        stack = ported.closure(None)
        check(f"{base}: stacked {','.join(s.name for s in stack)}", stack, base, torch_dir)
    if failures:
        raise SliceError("\n".join(lines) + "\n\n" + "\n".join(failures))
    return lines
