"""The pages' structure: every slice page follows one template, and every page
is reachable from the index.

The slice pages are the index's "Slices" toctree, and that toctree must list
exactly the slices the slice folders declare (``torch_rfc.slices`` entry
points), so a new slice gets a page of the same shape.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from markdown_it import MarkdownIt


DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
TEMPLATE = [
    "Problem in the base",
    "Upstream status",
    "Design",
    "Decisions",
    "Review history",
    "Follow-ups",
    "Examples",
    "Cost",
    "The patch and its ports",
]


def _tokens(page: Path) -> list:
    # Fenced blocks (examples, directives) are single tokens: a "# comment"
    # inside one is not a heading.
    return MarkdownIt("commonmark").parse(page.read_text(encoding="utf-8"))


def headings(page: Path, level: int) -> list[str]:
    tokens = _tokens(page)
    return [
        tokens[i + 1].content
        for i, token in enumerate(tokens)
        if token.type == "heading_open" and token.tag == f"h{level}"
    ]


def toctrees(page: Path) -> dict[str, list[str]]:
    """caption -> entries of each ``{toctree}`` block of ``page``."""
    found = {}
    for token in _tokens(page):
        if token.type != "fence" or token.info.strip() != "{toctree}":
            continue
        caption, entries = "", []
        for line in token.content.splitlines():
            if line.startswith(":caption:"):
                caption = line.removeprefix(":caption:").strip()
            elif line.strip() and not line.startswith(":"):
                entries.append(line.strip())
        found[caption] = entries
    return found


def declared_slices() -> set[str]:
    """The slices the folders declare, follow-ups (``followups/<name>/``) aside."""
    names = set()
    for pyproject in ROOT.glob("*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        declared = project.get("entry-points", {}).get("torch_rfc.slices", {})
        folder = pyproject.parent
        names |= {n for n in declared if not any(folder.glob(f"src/*/followups/{n}/"))}
    return names


SLICE_PAGES = toctrees(DOCS / "index.md").get("Slices", [])
FOLLOWUP_PAGES = toctrees(DOCS / "index.md").get("Follow-up PRs", [])
FOLLOWUP_SECTIONS = ["What it fixes", "Upstream status", "Design", "Review history", "The patch"]


def test_the_slices_toctree_lists_every_declared_slice() -> None:
    assert sorted(SLICE_PAGES) == sorted(declared_slices())


@pytest.mark.parametrize("name", FOLLOWUP_PAGES)
def test_followup_page_has_the_queue_and_one_section_per_pr(name: str) -> None:
    """A follow-up page opens with its PR queue, then one section per PR with
    the same subsections."""
    page = DOCS / f"{name}.md"
    sections = headings(page, 2)
    assert sections[0] == "PR queue"
    assert len(sections) > 1
    assert headings(page, 3) == FOLLOWUP_SECTIONS * (len(sections) - 1)


def test_the_slice_tables_are_as_the_declarations_write_them() -> None:
    """README's and the index's slice tables and the toctree are generated
    (``python -m rfc_shared tables``): a declaration changed without them is
    caught here."""
    from rfc_shared.authoring.tables import update

    assert [p.name for p in update(ROOT, check=True)] == []


@pytest.mark.parametrize("name", SLICE_PAGES)
def test_slice_page_follows_the_template(name: str) -> None:
    assert headings(DOCS / f"{name}.md", 2) == TEMPLATE


def test_every_page_is_in_the_index() -> None:
    listed = [entry for entries in toctrees(DOCS / "index.md").values() for entry in entries]
    pages = sorted(p.stem for p in DOCS.glob("*.md") if p.stem != "index")
    assert sorted(listed) == pages


def test_headings_are_found_outside_code_only(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## One\n\n```python\n# not a heading\n## nor this\n```\n\n## Two\n")
    assert headings(page, 2) == ["One", "Two"]
