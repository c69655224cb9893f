"""The "Adding a base" checklist of docs/architecture.md, followed for a
made-up release: its entry in ``bases.toml`` is all the engine and the
noxfile need, and a slice's series folder for it makes it the slice's base."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rfc_shared.overlay import base
from rfc_shared.overlay.slices import Slice, SliceError


ROOT = Path(__file__).resolve().parents[2]
NEW = """
[[base]]
version = "2.16.0"
git_version = "{commit}"
role = "backport"
requirements = ["torch==2.16.0"]
"""


def _bases_file(folder: Path, text: str = NEW.format(commit="1" * 40)) -> Path:
    path = folder / "bases.toml"
    path.write_text(base.BASES_FILE.read_text(encoding="utf-8") + text, encoding="utf-8")
    return path


def _slice_with_series(root: Path, version: str) -> Slice:
    folder = root / "demo" / f"torch-{version}"
    folder.mkdir(parents=True)
    (folder / "series").write_text("", encoding="utf-8")
    return Slice("demo", "unused", patches_root=root / "demo")


def test_the_new_base_is_known_with_its_role(tmp_path: Path, monkeypatch) -> None:
    bases = base.read_bases(_bases_file(tmp_path))
    assert bases[0] == base.PRIMARY_BASE and bases[0].role == "primary"
    monkeypatch.setattr(base, "KNOWN_BASES", bases)
    new = base.known_base("2.16.0")
    assert (new.role, new.requirements) == ("backport", ("torch==2.16.0",))


def test_a_series_folder_makes_it_a_base_of_the_slice(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(base, "KNOWN_BASES", base.read_bases(_bases_file(tmp_path)))
    demo = _slice_with_series(tmp_path / "slices", "2.16.0")
    assert [b.version for b in demo.bases] == ["2.16.0"]
    assert demo.series_dir(base.known_base("2.16.0")).name == "torch-2.16.0"


def test_a_series_for_a_base_not_in_the_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SliceError, match=r"unknown base .*declare the base in rfc_shared/bases"):
        _slice_with_series(tmp_path, "2.16.0")


def test_the_file_names_one_primary(tmp_path: Path) -> None:
    second = NEW.format(commit="1" * 40).replace('"backport"', '"primary"')
    with pytest.raises(ValueError, match="2 primary bases"):
        base.read_bases(_bases_file(tmp_path, second))
    with pytest.raises(ValueError, match="role 'nightly'"):
        base.read_bases(_bases_file(tmp_path, second.replace('"primary"', '"nightly"')))


@pytest.mark.skipif(shutil.which("nox") is None, reason="nox is not installed")
def test_nox_gains_the_backport_session(tmp_path: Path) -> None:
    """The noxfile reads the same file: a backport base gets its session, and
    so does a GPU image's base with requirements."""
    shutil.copy(ROOT / "noxfile.py", tmp_path)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "provision.py", tmp_path / "tools")
    engine = tmp_path / "shared" / "src" / "rfc_shared"
    (engine / "overlay").mkdir(parents=True)
    _bases_file(engine)
    shutil.copy(ROOT / "shared" / "src" / "rfc_shared" / "overlay" / "base.py", engine / "overlay")
    listed = subprocess.run(
        ["nox", "-l", "-f", str(tmp_path / "noxfile.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "backport-2.16.0" in listed
    for known in base.KNOWN_BASES:
        assert (f"backport-{known.version}" in listed) == (known.role == "backport")
        # A GPU image's base that names a CPU-runnable wheel runs its series' tests.
        carried = known.role == "gpu" and bool(known.requirements)
        assert (f"carried-{known.version}" in listed) == carried


REGISTRY_CORE = Path("rfc_registry_core") / "src" / "rfc_registry_core" / "patches"


def _declare(folder: Path, new: str, old_role: str) -> tuple[base.TorchBase, ...]:
    """bases.toml with the 2.16.0 entry ``new`` (a backport or the primary),
    the primary of today as ``old_role``."""
    text = base.BASES_FILE.read_text(encoding="utf-8")
    text = text.replace('role = "primary"', f'role = "{old_role}"')
    path = folder / "bases.toml"
    path.write_text(text + NEW.format(commit="1" * 40).replace('"backport"', f'"{new}"'))
    return base.read_bases(path)


def _pristine_release(cache: Path, release: base.TorchBase) -> None:
    """``release``'s pristine sources where the authoring tools look for them:
    the installed torch's .py files under its version."""

    def not_python(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if not n.endswith(".py") and not Path(folder, n).is_dir()]

    tree = cache / release.series_dir_name / "torch"
    shutil.copytree(base.torch_package_dir(), tree, ignore=not_python)
    (tree / "version.py").write_text(
        f"__version__ = '{release.version}'\ngit_version = '{release.git_version}'\n"
    )


def test_a_new_primary_is_declared_a_backport_then_ported_then_promoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new release goes in as a backport, so that the primary series keep
    serving every ``import torch``; each slice is ported with the real
    commands; only then does it become the primary (check-series refuses the
    promotion of a base a slice has no series for)."""
    from rfc_shared.__main__ import main
    from rfc_shared.authoring import check_series, source_roster
    from rfc_shared.overlay.roster import installed

    core = installed().narrowed(["registry_core"])

    project = tmp_path / "project"
    (project / REGISTRY_CORE).mkdir(parents=True)
    (project / "noxfile.py").write_text("")
    primary = base.PRIMARY_BASE
    shutil.copytree(
        ROOT / REGISTRY_CORE / primary.series_dir_name,
        project / REGISTRY_CORE / primary.series_dir_name,
    )
    monkeypatch.chdir(project)
    monkeypatch.setenv("TORCH_RFC_PRISTINE_CACHE", str(tmp_path / "pristine"))

    # 1. Declared a backport: the primary is today's, and no slice serves the new one yet.
    monkeypatch.setattr(base, "KNOWN_BASES", _declare(tmp_path, "backport", "primary"))
    new = base.known_base("2.16.0")
    _pristine_release(tmp_path / "pristine", new)
    assert base.KNOWN_BASES[0] == primary
    assert not source_roster(project, core).on(new).names()
    assert check_series(project, ["registry_core"])

    # Promoted too early: the slice has no series for the new primary.
    monkeypatch.setattr(base, "KNOWN_BASES", _declare(tmp_path, "primary", "backport"))
    with pytest.raises(SliceError, match="'registry_core' has no series for the primary base"):
        check_series(project, ["registry_core"])

    # 2. Ported while a backport, through the commands nox runs.
    monkeypatch.setattr(base, "KNOWN_BASES", _declare(tmp_path, "backport", "primary"))
    workspace = tmp_path / "ws"
    assert main(["workspace", "registry_core", "--base", "2.16.0", "--dest", str(workspace)]) == 0
    assert (
        main(["refresh", "registry_core", "--base", "2.16.0", "--workspace", str(workspace)]) == 0
    )
    assert (project / REGISTRY_CORE / new.series_dir_name / "series").is_file()

    # 3. Promoted: the new release is every slice's first base, and each series applies.
    monkeypatch.setattr(base, "KNOWN_BASES", _declare(tmp_path, "primary", "backport"))
    assert source_roster(project, core)["registry_core"].bases[:2] == (new, primary)
    lines = check_series(project, ["registry_core"])
    assert f"{new}: registry_core applies" in "\n".join(lines)
