"""The "Adding a slice" checklist of docs/architecture.md, followed for a
throwaway slice: installing its distribution is all the engine, the probe and
the matrix need; nothing else lists slices."""

from __future__ import annotations

from pathlib import Path

from rfc_shared.overlay.base import installed_torch_base
from rfc_shared.testing.helpers import format_patch, last_json, pristine, run_python


TARGET = "torch/_dynamo/mutation_guard.py"


def _install_demo_slice(site: Path) -> None:
    """What ``pip install rfc_demo/`` would put in site-packages."""
    base = installed_torch_base()
    package = site / "rfc_demo"
    series = package / "patches" / base.series_dir_name
    series.mkdir(parents=True)
    old = pristine(TARGET)
    (series / "0001-dynamo-Mark-the-demo.patch").write_text(
        format_patch(TARGET, old, old + "\nDEMO_SLICE_APPLIED = True\n", "[dynamo] Mark the demo")
    )
    (series / "series").write_text("0001-dynamo-Mark-the-demo.patch\n")
    (package / "__init__.py").write_text(
        "from rfc_shared.overlay.slices import Slice\n\n"
        "SLICE = Slice(\n"
        "    name='demo',\n"
        "    package=__name__,\n"
        "    requires=('registry_core',),\n"
        "    title='A throwaway slice',\n"
        ")\n"
    )
    (package / "probes.py").write_text(
        "from rfc_shared.conformance.harness import check\n"
        "from rfc_shared.conformance.probes import probe\n\n\n"
        "@probe('demo.marked', 'the demo patch is served')\n"
        "def _marked() -> str:\n"
        "    import torch._dynamo.mutation_guard as m\n\n"
        "    check(getattr(m, 'DEMO_SLICE_APPLIED', False), 'not served')\n"
        "    return 'served'\n"
    )
    info = site / "torch_rfc_demo-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch-rfc-demo\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[torch_rfc.slices]\ndemo = rfc_demo:SLICE\n")


def test_an_installed_slice_joins_the_overlay_the_probe_and_the_matrix(tmp_path: Path) -> None:
    _install_demo_slice(tmp_path)
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
        env={"PYTHONPATH": str(tmp_path)},
    )
    found = last_json(done)
    assert found["served"] == ["registry_core", "demo"]
    assert found["patched"] is True
    assert found["column"] == "demo"
    assert found["columns"][0] == "stock" and found["columns"][-1] == "stacked"
    assert "demo" in found["columns"]
    assert found["probe"] == "pass" and found["owner"] == "demo"
