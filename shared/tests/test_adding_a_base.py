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
