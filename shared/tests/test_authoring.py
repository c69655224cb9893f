"""workspace -> edit -> refresh, export and materialize, in a scratch copy of
the project so that the real series is never touched."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rfc_shared import authoring
from rfc_shared.base import TORCH_2_13_0
from rfc_shared.slices import discover_slices


REPO = Path(__file__).resolve().parents[2]
SERIES = Path("shared/src/rfc_shared/patches") / TORCH_2_13_0.series_dir_name


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "shared").mkdir(parents=True)
    (root / "noxfile.py").write_text("")
    shutil.copytree(REPO / SERIES, root / SERIES)
    shutil.copytree(REPO / "shared" / "tests" / "upstream", root / "shared" / "tests" / "upstream")
    return root


def test_refresh_reproduces_the_series_byte_for_byte(project: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in (project / SERIES).iterdir()}
    repo = authoring.workspace("shared", tmp_path / "ws", project)
    assert authoring.git(repo, "tag").split() == ["base", "deps"]
    authoring.refresh("shared", repo, project)
    assert {p.name: p.read_bytes() for p in (project / SERIES).iterdir()} == before


def test_a_commit_in_the_workspace_becomes_the_next_patch(project: Path, tmp_path: Path) -> None:
    repo = authoring.workspace("shared", tmp_path / "ws", project)
    utils = repo / "torch" / "_dynamo" / "utils.py"
    utils.write_text(utils.read_text() + "\nAUTHORED_IN_WORKSPACE = True\n")
    with pytest.raises(authoring.AuthoringError, match="uncommitted changes"):
        authoring.refresh("shared", repo, project)
    authoring.git(repo, "commit", "-qam", "[dynamo] Mark the workspace", identity=True)
    patches = authoring.refresh("shared", repo, project)
    assert [p.name for p in patches][-1] == "0002-dynamo-Mark-the-workspace.patch"
    assert "AUTHORED_IN_WORKSPACE" in patches[-1].read_text()
    assert "index " in patches[-1].read_text()


def test_workspace_refuses_to_overwrite(project: Path, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "work").write_text("unsaved")
    with pytest.raises(authoring.AuthoringError, match="exists"):
        authoring.workspace("shared", tmp_path / "ws", project)


def test_export_is_checked_with_git_am_and_carries_the_upstream_tests(
    project: Path, tmp_path: Path
) -> None:
    dest = authoring.export("shared", tmp_path / "out", project)
    patches = sorted(dest.glob("*.patch"))
    assert len(patches) == 2
    assert "+++ b/test/dynamo/test_device_interface_privateuse1.py" in patches[-1].read_text()
    assert "torch 2.13.0" in (dest / "README.md").read_text()


def test_materialize_writes_the_patched_tree(tmp_path: Path) -> None:
    out = tmp_path / "tree"
    done = subprocess.run(
        [sys.executable, "-m", "rfc_shared", "materialize", str(out), "--slices", "shared"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "torch/_dynamo/device_interface.py" in done.stdout
    patched = (out / "torch" / "_dynamo" / "device_interface.py").read_text()
    assert "def register_interface_for_device_PrivateUse1(" in patched
    shared = discover_slices()["shared"]
    assert shared.version == "0.1.0"
    assert (out / "torch" / "_dynamo" / "utils.py").is_file()
