import dataclasses
import re
from pathlib import Path

import pytest

from rfc_shared import selection
from rfc_shared.overlay.base import KNOWN_BASES, TorchBase, known_base
from rfc_shared.overlay.roster import DeclarationError, Distribution, Roster, installed
from rfc_shared.overlay.slices import BaseMismatchError, Slice, SliceError
from rfc_shared.testing.helpers import format_patch, write_slice


OLDER = known_base("2.13.0")


def make(name: str, *requires: str, after: tuple[str, ...] = ()) -> Slice:
    return Slice(name, name, (OLDER,), requires, stack_after=after)


INSTALLED = Roster(
    [
        make("registry_core"),
        make("rfc1", "registry_core"),
        make("rfc2", "registry_core", after=("rfc1",)),
        make("rfc3", "registry_core", "rfc1", after=("rfc2",)),
        make("lazy_reg", "registry_core", after=("rfc3",)),
        make("backend_feature", "registry_core", "rfc1", after=("lazy_reg",)),
    ]
)


def names(slices: object) -> list[str]:
    return [s.name for s in slices]  # type: ignore[attr-defined]


def test_selection_adds_dependencies_in_stack_order() -> None:
    assert names(INSTALLED.closure(["rfc3"])) == ["registry_core", "rfc1", "rfc3"]
    assert names(INSTALLED.closure(None)) == INSTALLED.names()


def test_dependencies_come_first_whatever_the_names() -> None:
    order = Roster([make("zeta"), make("alpha", "zeta"), make("omega")])
    assert order.names() == ["omega", "zeta", "alpha"]


def test_stack_after_orders_independent_slices_only_when_both_apply() -> None:
    order = Roster([make("a", after=("b",)), make("b"), make("c", after=("z",))])
    assert order.names() == ["b", "a", "c"]


def test_a_selection_keeps_the_order_of_the_whole_stack() -> None:
    # lazy_reg goes after rfc3, which goes after rfc2: with rfc3 left out,
    # lazy_reg still follows rfc2, as in the whole stack.
    assert names(INSTALLED.closure(["lazy_reg", "rfc2"])) == ["registry_core", "rfc2", "lazy_reg"]


def test_unknown_and_missing_slices_are_named() -> None:
    with pytest.raises(SliceError, match=r"'rfc9' is not installed \(installed: registry_core"):
        INSTALLED.closure(["rfc9"])
    partial = Roster([make("registry_core"), make("rfc3", "rfc1")])
    with pytest.raises(SliceError, match="'rfc3' requires slice 'rfc1'"):
        partial.closure(["rfc3"])


def test_cycles_are_an_error() -> None:
    with pytest.raises(SliceError, match="cycle"):
        Roster([make("registry_core"), make("a", "b"), make("b", "a")])
    with pytest.raises(SliceError, match="cycle"):
        Roster([make("a", after=("b",)), make("b", after=("a",))])


def test_two_slices_patching_one_file_must_be_ordered_by_declaration(slices_root: Path) -> None:
    path = "torch/_dynamo/rfc_common.py"
    both = [format_patch(path, None, "VALUE = 1\n")]
    aaa = write_slice(slices_root / "a", "aaa_new", both, base=OLDER)
    zzz = write_slice(slices_root / "z", "zzz_new", both, base=OLDER)
    with pytest.raises(DeclarationError) as info:
        Roster([aaa, zzz]).select(None, OLDER)
    assert "'aaa_new' and 'zzz_new' both patch torch/_dynamo/rfc_common.py" in str(info.value)
    assert "stack_after" in str(info.value)
    # Declared, through a slice in between: the names no longer decide.
    middle = Slice("middle", "middle", (OLDER,), stack_after=("zzz_new",), patches_root=slices_root)
    aaa = dataclasses.replace(aaa, stack_after=("middle",))
    assert names(Roster([aaa, zzz, middle]).select(["aaa_new", "zzz_new"], OLDER)) == [
        "zzz_new",
        "aaa_new",
    ]


def test_requires_is_checked_against_the_distributions_metadata() -> None:
    core, rfc1 = make("registry_core"), make("rfc1", "registry_core")
    shared = Distribution("torch-rfc-slices")
    Roster([core, rfc1], {"registry_core": shared, "rfc1": shared})  # one distribution
    backed = Distribution("torch-rfc1-identity", frozenset({"torch-rfc-registry-core"}))
    Roster([core, rfc1], {"registry_core": Distribution("torch-rfc-registry-core"), "rfc1": backed})
    unbacked = Distribution("torch-rfc1-identity", frozenset({"torch-rfc-shared"}))
    with pytest.raises(DeclarationError) as info:
        Roster(
            [core, rfc1],
            {"registry_core": Distribution("torch-rfc-registry-core"), "rfc1": unbacked},
        )
    assert str(info.value) == (
        "slice 'rfc1' requires slice 'registry_core', which torch-rfc-registry-core ships, but "
        "torch-rfc1-identity's metadata does not require torch-rfc-registry-core: add it to the "
        "dependencies in its pyproject.toml"
    )


def test_one_place_says_what_a_column_applies() -> None:
    assert INSTALLED.column("stock") == frozenset()
    assert INSTALLED.column("stacked") == frozenset(INSTALLED.names())
    assert INSTALLED.column("rfc3") == {"registry_core", "rfc1", "rfc3"}
    assert INSTALLED.column_of([]) == "stock"
    assert INSTALLED.column_of(INSTALLED.closure(["rfc3"])) == "rfc3"
    assert INSTALLED.column_of(INSTALLED.closure(["rfc3", "rfc2"])) == "stacked"
    assert Roster.column_selection("stock") == selection.NONE
    assert Roster.column_selection("stacked") == selection.ALL
    assert Roster.column_selection("rfc1") == "rfc1"
    assert INSTALLED.columns(OLDER) == ["stock", *INSTALLED.names(), "stacked"]


def test_a_probe_is_named_after_a_slice_of_its_own_package() -> None:
    INSTALLED.check_probe("rfc1.is_gpu", "rfc1")
    with pytest.raises(DeclarationError, match=r"probe 'rfc2.is_gpu' is registered by rfc1.probes"):
        INSTALLED.check_probe("rfc2.is_gpu", "rfc1")


def test_the_installed_slices_are_declared_consistently() -> None:
    roster = installed()
    assert roster is installed()  # built once per process
    for base in KNOWN_BASES:
        on = roster.on(base)
        on.check_order(on.closure(None), base)


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
    assert not Roster([s]).on(OLDER)


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
    roster = installed()
    assert roster
    for found in roster:
        key = found.name
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
    assert Roster([made, Slice(name="rfc9", package="pkg", patches_root=tmp_path)]).main() == [
        Slice(name="rfc9", package="pkg", patches_root=tmp_path)
    ]
