import pytest

from rfc_shared.overlay.applier import HunkMismatchError, apply_hunks
from rfc_shared.overlay.patchfile import Hunk


TEXT = "".join(f"line {i}\n" for i in range(1, 21))


def hunk(start: int, old: list[str], new: list[str]) -> Hunk:
    return Hunk(f"@@ -{start} @@", start, tuple(old), tuple(new))


def test_applies_at_the_stated_line() -> None:
    out = apply_hunks(TEXT, [hunk(4, ["line 4\n", "line 5\n"], ["line 4\n", "FIVE\n"])])
    assert "FIVE\n" in out and "line 5\n" not in out


def test_finds_a_moved_hunk_by_offset() -> None:
    shifted = "new 1\nnew 2\nnew 3\n" + TEXT
    out = apply_hunks(shifted, [hunk(4, ["line 4\n", "line 5\n"], ["line 4\n", "FIVE\n"])])
    assert out.splitlines()[7] == "FIVE"


def test_the_closest_match_wins() -> None:
    text = "x\n" + "a\n" * 5 + "x\n"
    out = apply_hunks(text, [hunk(6, ["a\n"], ["b\n"])])
    assert out.splitlines().index("b") == 5


def test_no_fuzz_one_changed_context_line_is_an_error() -> None:
    changed = TEXT.replace("line 6\n", "line six\n")
    with pytest.raises(HunkMismatchError) as info:
        apply_hunks(changed, [hunk(4, ["line 4\n", "line 5\n", "line 6\n"], ["X\n"])])
    message = str(info.value)
    assert "hunk #1" in message and "'line six'" in message


def test_later_hunks_never_match_before_earlier_ones() -> None:
    text = "a\nb\na\nb\n"
    out = apply_hunks(text, [hunk(3, ["a\n"], ["A\n"]), hunk(1, ["b\n"], ["B\n"])])
    assert out == "a\nb\nA\nB\n"


def test_pure_insertion_and_new_file() -> None:
    assert apply_hunks("a\nb\n", [hunk(1, [], ["x\n"])]) == "a\nx\nb\n"
    assert apply_hunks("", [hunk(0, [], ["x = 1\n"])]) == "x = 1\n"
