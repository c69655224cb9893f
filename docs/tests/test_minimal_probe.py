"""The conformance probe on the guide's minimal backends (section 9), and the
advice a vendor gets for a ``get_device_interface()`` that imports Inductor.

The backends give their DeviceInterface through ``get_device_interface()``, as
section 3 recommends, and register nothing for Dynamo themselves. Only the
cells that prove it run here (about 10 s a process, against minutes for the
whole probe, whose matrix for both backends is on the conformance page):

- ``lazy_reg.device_module_hook``: the registry gets the interface from the
  hook on first use, ``import torch._dynamo`` included, and importing the
  package stays light;
- ``rfc1.is_gpu``: a probe that varies the backend's interface has one to
  vary (without the hook it would be n/a: "registered no DeviceInterface").

The examples are built as the guide's own tests build them, into the same folder.
"""

from __future__ import annotations

import os
import shutil
from types import SimpleNamespace

import pytest

from rfc_shared import selection


CELLS = "lazy_reg.device_module_hook,rfc1.is_gpu"

# What a vendor writes who defines the hook beside the Inductor registration.
RIGHT_HOOK = "    from minimal_common.interface import HostInterface\n"
WRONG_HOOK = "    from .inductor import register  # imports torch._inductor\n" + RIGHT_HOOK


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, minimal: SimpleNamespace) -> dict[str, str]:
    """The probe's text report on the cells, every slice applied, on mhost,
    mgpu and a copy of mhost with the wrong hook: name -> report."""
    minimal.build()
    wrong = tmp_path_factory.mktemp("wrong_hook")
    shutil.copytree(minimal.site / "minimal_host", wrong / "minimal_host")
    device = wrong / "minimal_host" / "device.py"
    text = device.read_text(encoding="utf-8")
    assert RIGHT_HOOK in text
    device.write_text(text.replace(RIGHT_HOOK, WRONG_HOOK), encoding="utf-8")
    envs = {}
    for name, first in [("minimal_host", []), ("minimal_gpu", []), ("wrong_hook", [wrong])]:
        # The probe's own packages as this process has them; the wrong copy first.
        path = [*first, minimal.site, *filter(None, [os.environ.get("PYTHONPATH")])]
        envs[name] = {
            **minimal.environment(),
            selection.ENV: "all",
            "PYTHONPATH": os.pathsep.join(map(str, path)),
        }
    probe = ["-m", "rfc_shared.conformance", "--probes", CELLS, "--backend"]
    found = minimal.side_by_side(
        {
            "minimal_host": [*probe, "minimal_host"],
            "minimal_gpu": [*probe, "minimal_gpu"],
            "wrong_hook": [*probe, "minimal_host"],
        },
        envs,
    )
    for name, (returncode, _, err) in found.items():
        assert returncode == 0, f"{name}: {err[-3000:]}"
    return {name: out for name, (_, out, _) in found.items()}


def statuses(report: str) -> dict[str, str]:
    rows = report.split("\n\n")[0].splitlines()[1:]
    return dict(row.split() for row in rows)


@pytest.mark.parametrize("package", ["minimal_host", "minimal_gpu"])
def test_the_minimal_backends_give_their_interface_through_the_hook(
    reports: dict[str, str], package: str
) -> None:
    assert statuses(reports[package]) == dict.fromkeys(CELLS.split(","), "pass"), reports[package]


def test_a_hook_that_imports_inductor_gets_advice(reports: dict[str, str]) -> None:
    report = reports["wrong_hook"]
    assert statuses(report) == {"lazy_reg.device_module_hook": "FAIL", "rfc1.is_gpu": "pass"}
    evidence = next(line for line in report.splitlines() if line.startswith("FAIL"))
    assert evidence == (
        "FAIL lazy_reg.device_module_hook [stacked]: torch.mhost.get_device_interface() raised "
        "ImportError: cannot import name 'get_benchmark_name' from partially initialized module "
        "'torch._inductor.utils' where the registry first called it, inside `import "
        "torch._dynamo`: the registry asks it again later, but what it scanned during the import "
        "(the GPU types) missed mhost. Import only torch._dynamo.device_interface and "
        "minimal_host's interface module in the hook, and Inductor's modules in "
        "_inductor_backend_init() (backend guide, section 3)"
    )
