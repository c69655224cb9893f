from pathlib import Path

import pytest

from rfc_shared.overlay.patchfile import PatchFormatError, read_patch
from rfc_shared.testing.helpers import format_patch


def test_reads_subject_and_hunks(tmp_path: Path) -> None:
    file = tmp_path / "0001.patch"
    file.write_text(format_patch("torch/x.py", "a\nb\nc\n", "a\nB\nc\n", "[dynamo] Fix b"))
    patch = read_patch(file)
    assert patch.subject == "[dynamo] Fix b"
    (diff,) = patch.files
    assert (diff.path, diff.is_new) == ("torch/x.py", False)
    (hunk,) = diff.hunks
    assert hunk.old_lines == ("a\n", "b\n", "c\n")
    assert hunk.new_lines == ("a\n", "B\n", "c\n")


def test_new_file_and_missing_final_newline(tmp_path: Path) -> None:
    file = tmp_path / "0001.patch"
    file.write_text(format_patch("torch/new.py", None, "x = 1\n"))
    (diff,) = read_patch(file).files
    assert diff.is_new and diff.hunks[0].new_lines == ("x = 1\n",)

    file.write_text(
        "Subject: [PATCH] nl\n\n---\ndiff --git a/torch/q.py b/torch/q.py\n"
        "--- a/torch/q.py\n+++ b/torch/q.py\n@@ -1 +1,2 @@\n-q\n"
        "\\ No newline at end of file\n+q\n+r\n\\ No newline at end of file\n"
    )
    (hunk,) = read_patch(file).files[0].hunks
    assert hunk.old_lines == ("q",) and hunk.new_lines == ("q\n", "r")


def test_rejects_a_file_without_diff(tmp_path: Path) -> None:
    file = tmp_path / "0001.patch"
    file.write_text("Subject: [PATCH] nothing\n\nno diff here\n")
    with pytest.raises(PatchFormatError, match="holds no diff"):
        read_patch(file)


def test_rejects_deletions(tmp_path: Path) -> None:
    file = tmp_path / "0001.patch"
    file.write_text(
        "Subject: [PATCH] rm\n\n---\ndiff --git a/torch/x.py b/torch/x.py\n"
        "deleted file mode 100644\n--- a/torch/x.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )
    with pytest.raises(PatchFormatError, match="not supported"):
        read_patch(file)
