"""The "Adding a slice" checklist of docs/architecture.md, followed from an
empty folder with the commands it names: the folder, its declaration, the
series authored through ``workspace`` and ``refresh``, its probes; installing
its distribution is then all the engine, the probe and the matrix need."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from rfc_shared import authoring
from rfc_shared.overlay.base import installed_torch_base
from rfc_shared.testing.helpers import install_project_folder, last_json, run_python


REPO = Path(__file__).resolve().parents[2]
TARGET = "torch/_dynamo/mutation_guard.py"

PYPROJECT = """
    [project]
    name = "torch-rfc-demo"
    version = "0.1.0"
    dependencies = ["torch-rfc-shared>=0.1,<0.2", "torch-rfc-registry-core>=0.1,<0.2"]

    [project.entry-points."torch_rfc.slices"]
    demo = "rfc_demo:SLICE"
"""
DECLARATION = """
    from rfc_shared.overlay.slices import Slice

    SLICE = Slice(
        name="demo",
        package=__name__,
        requires=("registry_core",),
        title="A throwaway slice",
    )
"""
PROBES = """
    from rfc_shared.conformance.harness import check
    from rfc_shared.conformance.probes import probe


    @probe("demo.marked", "the demo patch is served")
    def _marked() -> str:
        import torch._dynamo.mutation_guard as m

        check(getattr(m, "DEMO_SLICE_APPLIED", False), "not served")
        return "served"
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _command(project: Path, site: Path, *args: str) -> str:
    """``python -m rfc_shared ARGS`` in the project, as its nox session runs it."""
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "rfc_shared", *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_slice_added_from_an_empty_folder_joins_the_overlay_the_probe_and_the_matrix(
    tmp_path: Path,
) -> None:
    project, site = tmp_path / "project", tmp_path / "site"
    site.mkdir()
    _write(project / "noxfile.py", "")
    core = Path("rfc_registry_core", "src", "rfc_registry_core", "patches")
    series = installed_torch_base().series_dir_name
    _write(project / core / series / "series", (REPO / core / series / "series").read_text())
    for patch in (REPO / core / series).glob("*.patch"):
        (project / core / series / patch.name).write_bytes(patch.read_bytes())

    # 1. The folder and its pyproject.toml; 2. the declaration; installed.
    demo = project / "rfc_demo"
    _write(demo / "pyproject.toml", PYPROJECT)
    _write(demo / "src" / "rfc_demo" / "__init__.py", DECLARATION)
    install_project_folder(demo, site)

    # 3. The series: workspace, a commit, refresh (which writes the first series).
    workspace = tmp_path / "ws"
    _command(project, site, "workspace", "demo", "--dest", str(workspace))
    guard = workspace / TARGET
    guard.write_text(guard.read_text() + "\nDEMO_SLICE_APPLIED = True\n")
    authoring.git(workspace, "commit", "-qam", "[dynamo] Mark the demo", identity=True)
    written = _command(project, site, "refresh", "demo", "--workspace", str(workspace))
    assert "0001-dynamo-Mark-the-demo.patch" in written
    assert (demo / "src" / "rfc_demo" / "patches" / series / "series").is_file()

    # 4. Its probes; installed again, with the series.
    _write(demo / "src" / "rfc_demo" / "probes.py", PROBES)
    install_project_folder(demo, site)

    done = run_python(
        """
        import json
        import torch._dynamo.mutation_guard as m
        from rfc_shared import overlay
        from rfc_shared.conformance import matrix, probes
        from rfc_shared.conformance.runner import column_name, run_probe

        print(json.dumps({
            "served": [s.name for s in overlay.active().slices],
            "patched": m.DEMO_SLICE_APPLIED,
            "column": column_name(),
            "columns": matrix.columns(),
            "probe": run_probe("demo.marked").status,
            "owner": probes.load()["demo.marked"].slice,
        }))
        """,
        slices="demo",
        env={"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])},
    )
    found = last_json(done)
    assert found["served"] == ["registry_core", "demo"]
    assert found["patched"] is True
    assert found["column"] == "demo"
    assert found["columns"][0] == "stock" and found["columns"][-1] == "stacked"
    assert "demo" in found["columns"]
    assert found["probe"] == "pass" and found["owner"] == "demo"
