import re
from pathlib import Path

import pytest

from rfc_shared import selection
from rfc_shared.overlay.base import TorchBase, known_base
from rfc_shared.overlay.slices import (
    BaseMismatchError,
    Slice,
    SliceError,
    discover_slices,
    for_base,
    main_slices,
    resolve,
    stack_order,
)
from rfc_shared.testing.helpers import write_slice


OLDER = known_base("2.13.0")


def make(name: str, *requires: str, after: tuple[str, ...] = ()) -> Slice:
    return Slice(name, name, (OLDER,), requires, stack_after=after)


INSTALLED = {
    s.name: s
    for s in (
        make("registry_core"),
        make("rfc1", "registry_core"),
        make("rfc2", "registry_core", after=("rfc1",)),
        make("rfc3", "registry_core", "rfc1", after=("rfc2",)),
        make("lazy_reg", "registry_core", after=("rfc3",)),
        make("backend_feature", "registry_core", "rfc1", after=("lazy_reg",)),
    )
}


def test_selection_adds_dependencies_in_stack_order() -> None:
    assert [s.name for s in resolve(["rfc3"], INSTALLED)] == ["registry_core", "rfc1", "rfc3"]
    assert [s.name for s in resolve(None, INSTALLED)] == list(INSTALLED)


def test_dependencies_come_first_whatever_the_names() -> None:
    order = stack_order([make("zeta"), make("alpha", "zeta"), make("omega")])
    assert [s.name for s in order] == ["omega", "zeta", "alpha"]


def test_stack_after_orders_independent_slices_only_when_both_apply() -> None:
    order = stack_order([make("a", after=("b",)), make("b"), make("c", after=("z",))])
    assert [s.name for s in order] == ["b", "a", "c"]


def test_unknown_and_missing_slices_are_named() -> None:
    with pytest.raises(SliceError, match=r"'rfc9' is not installed \(installed: registry_core"):
        resolve(["rfc9"], INSTALLED)
    partial = {"registry_core": make("registry_core"), "rfc3": make("rfc3", "rfc1")}
    with pytest.raises(SliceError, match="'rfc3' requires slice 'rfc1'"):
        resolve(["rfc3"], partial)


def test_cycles_are_an_error() -> None:
    with pytest.raises(SliceError, match="cycle"):
        stack_order([make("registry_core"), make("a", "b"), make("b", "a")])
    with pytest.raises(SliceError, match="cycle"):
        stack_order([make("a", after=("b",)), make("b", after=("a",))])


def test_environment_values() -> None:
    assert selection.parse(None) is None
    assert selection.parse("all") is None
    assert selection.parse(" None ") == []
    assert selection.parse("rfc1, rfc2") == ["rfc1", "rfc2"]
    with pytest.raises(selection.SelectionError, match="names no slice"):
        selection.parse(",")
    assert selection.stock_requested({selection.ENV: " NONE"})
    assert not selection.stock_requested({})


def test_a_base_without_series_is_refused_naming_both_versions(slices_root: Path) -> None:
    old = TorchBase("2.12.0", "0" * 40)
    s = write_slice(slices_root, "rfc1", [], base=old)
    with pytest.raises(BaseMismatchError) as info:
        s.series(OLDER)
    assert "torch 2.13.0" in str(info.value) and "torch 2.12.0" in str(info.value)
    assert not for_base({"rfc1": s}, OLDER)


def test_series_file_must_match_the_folder(slices_root: Path) -> None:
    s = write_slice(slices_root, "rfc1", [], base=OLDER)
    folder = s.series_dir(OLDER)
    (folder / "0009-stray.patch").write_text("x")
    with pytest.raises(SliceError, match="0009-stray.patch"):
        s.series(OLDER)
    (folder / "series").unlink()
    with pytest.raises(SliceError, match="series is missing"):
        s.series(OLDER)


def test_each_slice_is_named_after_its_folder() -> None:
    """One naming rule: a slice's key (its nox session, its TORCH_RFC_SLICES
    value) is its folder's name after ``rfc``: the number for a numbered RFC
    (rfc1_identity: rfc1), the topic otherwise (rfc_lazy_reg: lazy_reg); a
    follow-up PR declared in the same folder is named by its series folder,
    ``followups/<name>``, and follows the slice of its package."""
    installed = discover_slices()
    assert installed
    for key, found in installed.items():
        number = re.fullmatch(r"rfc(\d+)_\w+", found.package)
        stem = f"rfc{number[1]}" if number else found.package.removeprefix("rfc_")
        if found.followup_of:
            assert found.patches_folder == f"followups/{key}", found
            assert found.followup_of == stem, f"{key} follows {found.followup_of!r}, not {stem!r}"
            continue
        assert key == stem, f"{found.package}: slice {key!r}; the naming rule gives {stem!r}"


def test_a_followup_lives_in_its_own_folder(tmp_path) -> None:
    with pytest.raises(SliceError, match="cannot be a follow-up of itself"):
        Slice(name="extra", package="pkg", followup_of="extra", patches_root=tmp_path)
    alone = Slice(name="fix", package="pkg", followup_of="rfc9", patches_root=tmp_path)
    assert alone.requires == ()
    made = Slice(
        name="extra", package="pkg", requires=("rfc9",), followup_of="rfc9", patches_root=tmp_path
    )
    assert made.patches_folder == "followups/extra"
    assert main_slices([made, Slice(name="rfc9", package="pkg", patches_root=tmp_path)]) == [
        Slice(name="rfc9", package="pkg", patches_root=tmp_path)
    ]
