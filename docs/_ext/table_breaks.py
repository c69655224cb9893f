"""Long identifiers in table cells may break after ``_``, ``.`` and ``/``.

Sphinx keeps each word of an inline literal on one line (``<span
class="pre">`` is ``white-space: nowrap``), so a table of long names grows
wider than the text column, and the theme's scrolling box hides its last
column, usually the prose one. In table cells each such span is split after
those characters, with ``<wbr>`` between the pieces: the text, and what a copy
gives, are unchanged. A table that still does not fit scrolls in its box.
"""

from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx


_CELL = re.compile(r"<td\b.*?</td>", re.DOTALL)
_PRE = re.compile(r'<span class="pre">([^<]*)</span>')
_AFTER = re.compile(r"(?<=[_./])(?=[^_./])")  # after a run of separators


def _split(span: re.Match[str]) -> str:
    return "<wbr>".join(f'<span class="pre">{part}</span>' for part in _AFTER.split(span[1]))


def add_breaks(body: str) -> str:
    return _CELL.sub(lambda cell: _PRE.sub(_split, cell[0]), body)


def _page(app: Sphinx, pagename: str, template: str, context: dict[str, Any], doctree: Any) -> None:
    if "body" in context:
        context["body"] = add_breaks(context["body"])


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("html-page-context", _page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
