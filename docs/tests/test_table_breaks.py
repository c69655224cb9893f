"""Identifiers in table cells get break opportunities after ``_``, ``.`` and
``/``; nothing else in the page changes."""

from __future__ import annotations

import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))

from table_breaks import add_breaks


def pre(text: str) -> str:
    return f'<span class="pre">{text}</span>'


def test_identifiers_in_cells_break_after_separators() -> None:
    cell = f"<td><p><code>{pre('torch._inductor.compile_fx')}</code></p></td>"
    assert add_breaks(cell) == (
        "<td><p><code>"
        + "<wbr>".join(pre(p) for p in ("torch._", "inductor.", "compile_", "fx"))
        + "</code></p></td>"
    )


def test_text_outside_cells_is_left_alone() -> None:
    para = f"<p><code>{pre('get_gpu_type()')}</code></p><td>a_b</td>"
    assert add_breaks(para) == para
