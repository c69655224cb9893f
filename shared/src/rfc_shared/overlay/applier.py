"""Apply hunks to text in memory, the way ``git apply`` does: no fuzz.

Each hunk's old lines (context and removals) must match the text exactly.
When the file has moved since the patch was written, the hunk is searched for
at growing distances from where its header says it was, but never before the
end of the previous hunk. A hunk that matches nowhere is an error.
"""

from __future__ import annotations

from collections.abc import Sequence

from .patchfile import Hunk


class HunkMismatchError(ValueError):
    """A hunk whose old lines are not found in the text."""

    def __init__(self, hunk: Hunk, index: int, detail: str) -> None:
        super().__init__(f"hunk #{index + 1} {hunk.header} does not apply: {detail}")
        self.hunk = hunk
        self.index = index


def _first_difference(lines: Sequence[str], at: int, expected: Sequence[str]) -> str:
    for offset, want in enumerate(expected):
        got = lines[at + offset] if at + offset < len(lines) else "<end of file>"
        if got != want:
            return f"at line {at + offset + 1} expected {want.rstrip()!r}, found {got.rstrip()!r}"
    return "context found nowhere"


def _find(lines: Sequence[str], old: Sequence[str], expected: int, lowest: int) -> int:
    """Index where ``old`` occurs, closest to ``expected`` and >= ``lowest``."""
    highest = len(lines) - len(old)
    expected = min(max(expected, lowest), max(highest, lowest))
    n = len(old)
    for distance in range(max(expected - lowest, highest - expected) + 1):
        for at in (expected - distance, expected + distance):
            if lowest <= at <= highest and lines[at : at + n] == list(old):
                return at
    return -1


def apply_hunks(text: str, hunks: Sequence[Hunk]) -> str:
    """Return ``text`` with every hunk applied.

    Raises:
        HunkMismatchError: naming the first hunk that does not apply.
    """
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0
    shift = 0
    for index, hunk in enumerate(hunks):
        # A header line number is 1-based; a pure insertion (no old lines)
        # names the line after which it inserts.
        start = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        expected = start + shift
        at = _find(lines, hunk.old_lines, expected, cursor)
        if at < 0:
            detail = _first_difference(
                lines, min(max(expected, cursor), len(lines)), hunk.old_lines
            )
            raise HunkMismatchError(hunk, index, detail)
        out.extend(lines[cursor:at])
        out.extend(hunk.new_lines)
        cursor = at + len(hunk.old_lines)
        shift = at - start
    out.extend(lines[cursor:])
    return "".join(out)
