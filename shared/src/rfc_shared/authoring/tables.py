"""The slice tables of ``README.md`` and ``docs/index.md``, written from the
installed slices' declarations (name, issue, summary) and their folders'
``pyproject.toml``, so that no page lists slices by hand.

A generated region sits between ``<!-- generated: KIND -->`` and
``<!-- end generated -->``; ``python -m rfc_shared tables`` rewrites every
region, ``--check`` only says which are stale.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path

from ..overlay.roster import Roster, installed
from ..overlay.slices import Slice
from .workflow import project_root, slice_source_dir


PAGES = ("README.md", "docs/index.md")
REGION = re.compile(
    r"(<!-- generated: (?P<kind>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S
)


def _distribution(folder: Path) -> str:
    with (folder / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]["name"]


def _slice_folders(root: Path, slices: list[Slice]) -> str:
    """README: one row per slice folder, its slices in stack order."""
    rows = ["| folder | distribution | slices |", "|---|---|---|"]
    by_folder: dict[Path, list[Slice]] = {}
    for s in slices:
        by_folder.setdefault(slice_source_dir(root, s), []).append(s)
    for folder, held in by_folder.items():
        what = "; ".join(f"`{s.name}` ({s.issue}): {s.summary}" for s in held if not s.followup_of)
        followups = [f"`{s.name}`" for s in held if s.followup_of]
        if followups:
            what += f"; follow-up PRs {', '.join(followups)}"
        rows.append(f"| `{folder.name}/` | `{_distribution(folder)}` | {what} |")
    return "\n".join(rows) + "\n"


def _slice_index(root: Path, slices: list[Slice]) -> str:
    """docs/index.md: the slices with their pages."""
    rows = ["| slice | sub-RFC | what it changes |", "|---|---|---|"]
    rows += [
        f"| `{s.name}` | {s.issue} | {s.summary} ({{doc}}`{s.name}`) |"
        for s in slices
        if not s.followup_of
    ]
    return "\n".join(rows) + "\n"


def followup_page(parent: str) -> str:
    """The docs page of the follow-up PRs of slice ``parent``."""
    return f"{parent}_followups"


def _followup_queue(root: Path, slices: list[Slice]) -> str:
    """docs/index.md: every follow-up PR, with the slice it follows."""
    rows = ["| follow-up PR | follows | upstream | what it changes |", "|---|---|---|---|"]
    rows += [
        f"| `{s.name}` | `{s.followup_of}` | {s.issue} | {s.summary} "
        f"({{doc}}`{followup_page(s.followup_of)}`) |"
        for s in slices
        if s.followup_of
    ]
    return "\n".join(rows) + "\n"


def _slice_toctree(root: Path, slices: list[Slice]) -> str:
    """docs/index.md: the slice pages, in stack order."""
    lines = ["```{toctree}", ":caption: Slices", ":maxdepth: 2", ""]
    lines += [s.name for s in slices if not s.followup_of]
    pages = dict.fromkeys(followup_page(s.followup_of) for s in slices if s.followup_of)
    lines += ["```", "", "```{toctree}", ":caption: Follow-up PRs", ":maxdepth: 2", "", *pages]
    return "\n".join([*lines, "```"]) + "\n"


KINDS: dict[str, Callable[[Path, list[Slice]], str]] = {
    "slice-folders": _slice_folders,
    "slice-index": _slice_index,
    "slice-toctree": _slice_toctree,
    "followup-queue": _followup_queue,
}


def render(text: str, root: Path, slices: list[Slice]) -> str:
    """``text`` with each generated region written anew.

    Raises:
        ValueError: a region of a kind this module does not write.
    """

    def fill(match: re.Match[str]) -> str:
        kind = match["kind"]
        if kind not in KINDS:
            raise ValueError(f"unknown generated region {kind!r} (known: {', '.join(KINDS)})")
        return match.group(1) + KINDS[kind](root, slices) + match.group(4)

    return REGION.sub(fill, text)


def update(
    root: Path | None = None, check: bool = False, roster: Roster | None = None
) -> list[Path]:
    """Rewrite (or with ``check``, only compare) the generated regions of
    :data:`PAGES`; returns the pages that were (or would be) changed."""
    root = project_root(root)
    slices = list(roster or installed())
    stale = []
    for name in PAGES:
        page = root / name
        text = page.read_text(encoding="utf-8")
        fresh = render(text, root, slices)
        if fresh != text:
            stale.append(page)
            if not check:
                page.write_text(fresh, encoding="utf-8")
    return stale
