"""Read ``git format-patch`` files into plain hunks.

The diff itself is parsed by :mod:`unidiff`; the mail header (the commit
subject) by :mod:`email`. What comes out is independent of both: the applier
only needs each hunk's old lines, new lines and header position.
"""

from __future__ import annotations

import email.header
import email.parser
from dataclasses import dataclass
from pathlib import Path

import unidiff
from unidiff.constants import (
    LINE_TYPE_ADDED,
    LINE_TYPE_CONTEXT,
    LINE_TYPE_NO_NEWLINE,
    LINE_TYPE_REMOVED,
)


class PatchFormatError(ValueError):
    """A patch file that is not a usable ``git format-patch`` file."""


@dataclass(frozen=True)
class Hunk:
    """One ``@@`` block: the lines it expects and the lines it leaves."""

    header: str
    old_start: int
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]


@dataclass(frozen=True)
class FileDiff:
    """The changes a patch makes to one file, by repository-relative path."""

    path: str
    is_new: bool
    hunks: tuple[Hunk, ...]


@dataclass(frozen=True)
class Patch:
    """One commit of a series."""

    file: Path
    subject: str
    files: tuple[FileDiff, ...]
    raw: bytes

    @property
    def name(self) -> str:
        return self.file.name


def _subject(text: str) -> str:
    # The headers end at the first empty line; the parser would read the
    # whole patch (a third of the time `import torch` spends on the overlay).
    headers = email.parser.HeaderParser().parsestr(text.split("\n\n", 1)[0])
    raw = headers.get("Subject", "")
    decoded = email.header.make_header(email.header.decode_header(raw))
    subject = " ".join(str(decoded).split())
    if subject.startswith("[PATCH"):
        subject = subject.split("]", 1)[-1].strip()
    return subject


def _hunk(hunk: unidiff.Hunk) -> Hunk:
    old: list[str] = []
    new: list[str] = []
    last = LINE_TYPE_CONTEXT
    for line in hunk:
        kind = line.line_type
        if kind == LINE_TYPE_NO_NEWLINE:
            # The marker applies to the line just before it, on its side(s).
            if last != LINE_TYPE_ADDED:
                old[-1] = old[-1].removesuffix("\n")
            if last != LINE_TYPE_REMOVED:
                new[-1] = new[-1].removesuffix("\n")
            continue
        if kind != LINE_TYPE_ADDED:
            old.append(line.value)
        if kind != LINE_TYPE_REMOVED:
            new.append(line.value)
        last = kind
    header = (
        f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@"
    )
    return Hunk(header, hunk.source_start, tuple(old), tuple(new))


def read_patch(file: Path) -> Patch:
    """Parse one ``git format-patch`` file.

    Raises:
        PatchFormatError: the file holds no diff, or a change the overlay
            cannot serve (a deletion, a rename, a binary file).
    """
    raw = file.read_bytes()
    text = raw.decode("utf-8")
    try:
        patch_set = unidiff.PatchSet(text)
    except unidiff.UnidiffParseError as e:
        raise PatchFormatError(f"{file.name}: not a unified diff: {e}") from e
    if not len(patch_set):
        raise PatchFormatError(f"{file.name}: holds no diff")
    files = []
    for diff in patch_set:
        if diff.is_removed_file or diff.is_rename or diff.is_binary_file:
            raise PatchFormatError(
                f"{file.name}: {diff.path}: deletions, renames and binary files are not supported"
            )
        files.append(FileDiff(diff.path, diff.is_added_file, tuple(_hunk(h) for h in diff)))
    return Patch(file, _subject(text), tuple(files), raw)
