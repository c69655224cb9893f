"""workspace -> edit -> refresh, export and materialize, in a scratch copy of
the project so that the real series is never touched."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rfc_registry_core as core
from rfc_shared import authoring
from rfc_shared.overlay import Overlay
from rfc_shared.overlay import base as base_module
from rfc_shared.overlay.base import TorchBase, installed_torch_base, torch_package_dir
from rfc_shared.overlay.roster import Roster, installed
from rfc_shared.overlay.slices import Slice


REPO = Path(__file__).resolve().parents[2]
SLICES = installed()
SLICE_DIR = Path("rfc_registry_core")
# The series the tests author and port is this base's (no other download).
INSTALLED = installed_torch_base()
SERIES = SLICE_DIR / "src" / "rfc_registry_core" / "patches" / INSTALLED.series_dir_name


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "noxfile.py").write_text("")
    shutil.copytree(REPO / SERIES, root / SERIES)
    return root


def test_refresh_reproduces_the_series_byte_for_byte(project: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in (project / SERIES).iterdir()}
    repo = authoring.workspace("registry_core", tmp_path / "ws", project)
    assert authoring.git(repo, "tag").split() == ["base", "deps"]
    authoring.refresh("registry_core", repo, project)
    assert {p.name: p.read_bytes() for p in (project / SERIES).iterdir()} == before


def test_a_commit_in_the_workspace_becomes_the_next_patch(project: Path, tmp_path: Path) -> None:
    repo = authoring.workspace("registry_core", tmp_path / "ws", project)
    utils = repo / "torch" / "_dynamo" / "utils.py"
    utils.write_text(utils.read_text() + "\nAUTHORED_IN_WORKSPACE = True\n")
    with pytest.raises(authoring.AuthoringError, match="uncommitted changes"):
        authoring.refresh("registry_core", repo, project)
    authoring.git(repo, "commit", "-qam", "[dynamo] Mark the workspace", identity=True)
    before = len(list((project / SERIES).glob("*.patch")))
    patches = authoring.refresh("registry_core", repo, project)
    assert [p.name for p in patches][-1] == f"{before + 1:04d}-dynamo-Mark-the-workspace.patch"
    assert "AUTHORED_IN_WORKSPACE" in patches[-1].read_text()
    assert "index " in patches[-1].read_text()


def test_a_new_slice_gets_a_workspace_and_its_first_series(project: Path, tmp_path: Path) -> None:
    # Step 3 of "Adding a slice": the package exists, with no patches folder yet.
    (project / "rfc_new" / "src" / "rfc_new").mkdir(parents=True)
    new = Slice("new", "rfc_new", bases=(), requires=("registry_core",))
    roster = Roster([*SLICES, new])
    repo = authoring.workspace("new", tmp_path / "ws", project, roster=roster)
    assert authoring.git(repo, "tag").split() == ["base", "deps"]
    guard = repo / "torch" / "_dynamo" / "mutation_guard.py"
    guard.write_text(guard.read_text() + "\nNEW_SLICE = True\n")
    authoring.git(repo, "commit", "-qam", "[dynamo] Start the new slice", identity=True)
    patches = authoring.refresh("new", repo, project, roster=roster)
    series = project / "rfc_new" / "src" / "rfc_new" / "patches" / INSTALLED.series_dir_name
    assert [p.parent for p in patches] == [series]
    assert patches[0].name == "0001-dynamo-Start-the-new-slice.patch"
    assert "0001-dynamo-Start-the-new-slice.patch" in (series / "series").read_text()


def test_workspace_refuses_to_overwrite(project: Path, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "work").write_text("unsaved")
    with pytest.raises(authoring.AuthoringError, match="exists"):
        authoring.workspace("registry_core", tmp_path / "ws", project)


def test_export_is_authored_by_the_exporting_user_and_carries_the_tests(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Jane Contributor")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "jane@example.com")
    dest = authoring.export("registry_core", tmp_path / "out", project)
    patches = sorted(dest.glob("*.patch"))
    assert all("From: Jane Contributor <jane@example.com>" in p.read_text() for p in patches)
    # Each patch carries its tests and says how to run them; on a backport base
    # a [backport] patch brings upstream's API, which the next patches test.
    for patch in patches:
        text = patch.read_text()
        assert "\nTest Plan:\n" in text, patch.name
        assert "\n+++ b/test/" in text or "[backport]" in text.split("\n\n", 1)[0], patch.name
    assert "+++ b/test/dynamo/test_device_interface_privateuse1.py" in patches[0].read_text()
    assert "git am -3" in (dest / "README.md").read_text()


def test_export_needs_a_git_identity(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(authoring.AuthoringError, match="no git identity"):
        authoring.export("registry_core", tmp_path / "out", project)


def test_a_class_that_defines_a_method_twice_is_found() -> None:
    source = (
        "class DeviceInterface:\n"
        "    def is_gpu(self): ...\n"
        "    @property\n    def x(self): ...\n    @x.setter\n    def x(self, v): ...\n"
        "    def is_gpu(self): ...\n"
    )
    assert authoring.duplicate_definitions(source) == ["DeviceInterface.is_gpu"]


def test_materialize_writes_the_patched_tree(tmp_path: Path) -> None:
    out = tmp_path / "tree"
    done = subprocess.run(
        [sys.executable, "-m", "rfc_shared", "materialize", str(out), "--slices", "registry_core"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "torch/_dynamo/device_interface.py" in done.stdout
    patched = (out / "torch" / "_dynamo" / "device_interface.py").read_text()
    assert "def register_interface_for_device_PrivateUse1(" in patched
    shared = SLICES["registry_core"]
    assert shared.version == "0.1.0"
    assert (out / "torch" / "_dynamo" / "utils.py").is_file()


OTHER = TorchBase("9.9.9", "f" * 40)


@pytest.fixture
def other_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A second known base whose cached pristine sources are the installed
    torch's .py files with its own version and a shifted device_interface.py."""
    monkeypatch.setattr(base_module, "KNOWN_BASES", (*base_module.KNOWN_BASES, OTHER))
    cache = tmp_path / "pristine"
    monkeypatch.setenv("TORCH_RFC_PRISTINE_CACHE", str(cache))
    tree = cache / OTHER.series_dir_name / "torch"

    def not_python(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if not n.endswith(".py") and not Path(folder, n).is_dir()]

    shutil.copytree(torch_package_dir(), tree, ignore=not_python)
    (tree / "version.py").write_text(
        f"__version__ = '{OTHER.version}'\ngit_version = '{OTHER.git_version}'\n"
    )
    interface = tree / "_dynamo" / "device_interface.py"
    moved = "# Moved down by a change of the other release.\n" * 7
    interface.write_text(moved + interface.read_text())
    return tree


def test_a_series_ports_to_another_base_and_refresh_writes_it(
    project: Path, tmp_path: Path, other_base: Path
) -> None:
    repo = authoring.workspace(
        "registry_core", tmp_path / "ws", project, base=OTHER, port_from=INSTALLED
    )
    assert "Moved down" in (repo / "torch" / "_dynamo" / "device_interface.py").read_text()
    authoring.refresh("registry_core", repo, project, base=OTHER)
    ported = project / SERIES.parent / OTHER.series_dir_name
    assert (ported / "series").is_file()
    shared = authoring.source_slices(project, "registry_core")
    assert OTHER in shared[0].bases
    overlay = Overlay.build(shared, other_base)
    patched = overlay.files["torch/_dynamo/device_interface.py"].text
    assert patched.startswith("# Moved down")
    assert "def register_interface_for_device_PrivateUse1(" in patched


@pytest.fixture
def ported(
    project: Path, tmp_path: Path, other_base: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """registry_core's primary series ported to OTHER in the scratch project
    (which holds the primary series only: no other download); the workspace."""
    monkeypatch.setattr(core, "SLICE", dataclasses.replace(core.SLICE, bases=(INSTALLED,)))
    repo = authoring.workspace(
        "registry_core", tmp_path / "ws", project, base=OTHER, port_from=INSTALLED
    )
    authoring.refresh("registry_core", repo, project, base=OTHER)
    return repo


def test_check_series_applies_each_series_to_its_own_base(project: Path, ported: Path) -> None:
    lines = authoring.check_series(project, ["registry_core"])
    assert [line.split(":")[0] for line in lines] == [str(INSTALLED)] * 2 + [str(OTHER)] * 2
    assert all(" applies (" in line for line in lines)


def test_a_port_stops_on_conflicts_and_says_how_to_go_on(
    project: Path, tmp_path: Path, other_base: Path
) -> None:
    interface = other_base / "_dynamo" / "device_interface.py"
    line = "    device_interfaces[device] = device_interface\n"
    assert line in interface.read_text()
    changed = line.replace("device]", "str(device)]")
    interface.write_text(interface.read_text().replace(line, changed))
    with pytest.raises(authoring.PortConflictError, match="device_interface.py") as stopped:
        authoring.workspace(
            "registry_core", tmp_path / "ws", project, base=OTHER, port_from=INSTALLED
        )
    assert "cherry-pick --continue" in str(stopped.value)
    status = authoring.git(tmp_path / "ws", "status", "--porcelain")
    assert "UU torch/_dynamo/device_interface.py" in status


def test_a_slice_is_not_ported_before_its_dependencies(
    project: Path, tmp_path: Path, other_base: Path
) -> None:
    rfc1 = REPO / "rfc1_identity"
    shutil.copytree(rfc1 / "src", project / "rfc1_identity" / "src")
    with pytest.raises(authoring.AuthoringError, match="needs registry_core on torch 9.9.9"):
        authoring.workspace("rfc1", tmp_path / "ws", project, base=OTHER, port_from=INSTALLED)


def test_unknown_base_is_a_clear_error() -> None:
    with pytest.raises(base_module.UnknownBaseError, match="known: 2.15.0, 2.13.0, 2.11.0"):
        base_module.known_base("1.0.0")


def test_cached_sources_of_another_release_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rfc_shared.authoring import pristine

    monkeypatch.setenv("TORCH_RFC_PRISTINE_CACHE", str(tmp_path))
    tree = tmp_path / OTHER.series_dir_name / "torch"
    tree.mkdir(parents=True)
    (tree / "version.py").write_text("__version__ = '9.9.9'\ngit_version = 'abc'\n")
    with pytest.raises(pristine.PristineSourcesError, match="holds torch 9.9.9 .*not torch 9.9.9"):
        pristine.sources_dir(OTHER)
    assert pristine.sources_dir(INSTALLED) == torch_package_dir()  # the installed release


def test_the_command_line_names_an_unknown_base(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rfc_shared",
            "workspace",
            "registry_core",
            "--base",
            "1.0.0",
            "--dest",
            str(tmp_path / "ws"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 1
    assert "error: torch 1.0.0 is not a known base (known: 2.15.0, 2.13.0, 2.11.0)" in done.stderr
    assert not (tmp_path / "ws").exists()


def test_module_surface_names_public_functions_classes_members_and_parameters() -> None:
    from rfc_shared.authoring.surface import module_surface

    source = (
        "import enum\n"
        "class Feature(enum.Enum):\n    GPU = enum.auto()\n    _HIDDEN = 1\n"
        "class Interface:\n"
        "    @staticmethod\n    def graph_capture(device=None, *, strict: bool = False): ...\n"
        "    def _private(self): ...\n"
        "def register(name: str, interface, /, *args, **kwargs): ...\n"
        "def _helper(): ...\n"
        "LIMIT: int = 3\n"
    )
    assert module_surface(source, "torch.m") == {
        "torch.m:Feature": "class",
        "torch.m:Feature.GPU": "attribute",
        "torch.m:Interface": "class",
        "torch.m:Interface.graph_capture": "function @staticmethod",
        "torch.m:Interface.graph_capture(device)": "positional=None",
        "torch.m:Interface.graph_capture(strict)": "keyword-only=False",
        "torch.m:register": "function",
        "torch.m:register(name)": "positional-only",
        "torch.m:register(interface)": "positional-only",
        "torch.m:register(*args)": "var-positional",
        "torch.m:register(**kwargs)": "var-keyword",
        "torch.m:LIMIT": "attribute",
    }


def test_check_surface_names_a_signature_that_differs_between_bases(
    project: Path, ported: Path
) -> None:
    from rfc_shared.authoring.surface import surface_differences

    repo = ported
    slices = authoring.source_slices(project, "registry_core")
    assert surface_differences(slices, INSTALLED) == []

    # The port renames a parameter: a backend calling it by keyword breaks there.
    interface = repo / "torch" / "_dynamo" / "device_interface.py"
    text = interface.read_text()
    start = text.index("def register_interface_for_device_PrivateUse1(")
    signature = text[start : text.index(")", start)]
    interface.write_text(text.replace(signature, signature.replace("device:", "name:", 1), 1))
    authoring.git(repo, "commit", "-qam", "[dynamo] Rename a parameter", identity=True)
    authoring.refresh("registry_core", repo, project, base=OTHER)
    problems = surface_differences(authoring.source_slices(project, "registry_core"), INSTALLED)
    assert any(
        p.startswith(f"registry_core on {OTHER.version}: lacks ")
        and "register_interface_for_device_PrivateUse1(device)" in p
        for p in problems
    ), problems
