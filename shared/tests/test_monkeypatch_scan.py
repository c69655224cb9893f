"""The monkeypatch scan: what it reports, what it leaves alone, and its command."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rfc_shared.testing.monkeypatch_scan import main, scan_paths, scan_source


REPO = Path(__file__).resolve().parents[2]

# The backends the project ships: each reaches torch.compile through public entries only.
SHIPPED_BACKENDS = [
    "docs/examples/minimal_common",
    "docs/examples/minimal_host",
    "docs/examples/minimal_gpu",
    "docs/examples/minimal_gpu_triton",
    "torch_acc/torch_acc",
    "torch_acc/torch_acc_triton",
    "torch_sealed/torch_sealed",
]


def findings(source: str) -> list[str]:
    """The scan's report on ``source``, one ``line: action target`` string a finding."""
    found = scan_source(textwrap.dedent(source), Path("vendor.py"))
    return [str(finding).removeprefix("vendor.py:") for finding in found]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "import torch\ntorch._inductor.utils.GPU_TYPES.append('x')",
            "2: .append() on torch._inductor.utils.GPU_TYPES",
        ),
        ("import torch\ntorch.utils.foo = 2", "2: assignment to torch.utils.foo"),
        ("import torch as t\nt.acc = object()", "2: assignment to torch.acc"),
        (
            "import torch._inductor.utils as u\nu.X = 1",
            "2: assignment to torch._inductor.utils.X",
        ),
        (
            "from torch._inductor import utils\nutils.GPU_TYPES.append('x')",
            "2: .append() on torch._inductor.utils.GPU_TYPES",
        ),
        (
            "from torch._inductor.utils import GPU_TYPES\nGPU_TYPES.append('x')",
            "2: .append() on torch._inductor.utils.GPU_TYPES",
        ),
        (
            "from torch._inductor.utils import GPU_TYPES\nGPU_TYPES += ['x']",
            "2: += on torch._inductor.utils.GPU_TYPES",
        ),
        (
            "import torch._inductor.utils as iu\niu.GPU_TYPES.extend(['x'])",
            "2: .extend() on torch._inductor.utils.GPU_TYPES",
        ),
        (
            "import torch\ntorch._inductor.utils.GPU_TYPES.insert(0, 'x')",
            "2: .insert() on torch._inductor.utils.GPU_TYPES",
        ),
        (
            "from torch._dynamo import device_interface as di\ndi.device_interfaces.update(x=1)",
            "2: .update() on torch._dynamo.device_interface.device_interfaces",
        ),
        (
            "from torch._dynamo import config\nconfig.skipfiles.add('x')",
            "2: .add() on torch._dynamo.config.skipfiles",
        ),
        (
            "import torch\ntorch._dynamo.device_interface.device_interfaces.__setitem__('x', 1)",
            "2: .__setitem__() on torch._dynamo.device_interface.device_interfaces",
        ),
        (
            "import torch\ntorch._inductor.config.cpp_wrapper = True",
            "2: assignment to torch._inductor.config.cpp_wrapper",
        ),
        (
            "import torch\nsetattr(torch.utils._triton, 'has_triton', lambda: True)",
            "2: setattr() on torch.utils._triton.has_triton",
        ),
        (
            "import torch\ndelattr(torch.cuda, 'is_available')",
            "2: delattr() on torch.cuda.is_available",
        ),
        ("import torch\ndel torch._C._dynamo", "2: del of torch._C._dynamo"),
        (
            "import torch\ndel torch._inductor.utils.GPU_TYPES[0]",
            "2: del of torch._inductor.utils.GPU_TYPES[0]",
        ),
        (
            "import torch\ntorch.Tensor.is_x = property(lambda self: True)",
            "2: assignment to torch.Tensor.is_x",
        ),
        (
            "import triton.backends\ntriton.backends.backends['x'] = object()",
            "2: assignment to triton.backends.backends['x']",
        ),
        (
            "from triton.backends import backends\nbackends.update(x=object())",
            "2: .update() on triton.backends.backends",
        ),
        (
            "import triton\ntriton.runtime.driver._active = object()",
            "2: assignment to triton.runtime.driver._active",
        ),
        (
            "import torch\nutils = torch._inductor.utils\nutils.is_gpu = lambda device: True",
            "3: assignment to torch._inductor.utils.is_gpu",
        ),
        (
            "import torch\ngetattr(torch._inductor, 'utils').GPU_TYPES.append('x')",
            "2: .append() on torch._inductor.utils.GPU_TYPES",
        ),
        (
            "import importlib\n"
            "importlib.import_module('torch._inductor.utils').GPU_TYPES.append('x')",
            "2: .append() on torch._inductor.utils.GPU_TYPES",
        ),
        (
            """
            def _inductor_backend_init():
                from torch._inductor import utils
                utils.GPU_TYPES.append('x')
            """,
            "4: .append() on torch._inductor.utils.GPU_TYPES",
        ),
        (
            """
            import torch
            class Backend:
                def install(self):
                    torch._dynamo.device_interface.device_interfaces['x'] = self
            """,
            "5: assignment to torch._dynamo.device_interface.device_interfaces['x']",
        ),
    ],
)
def test_a_planted_patch_is_reported_with_its_line_target_and_action(
    source: str, expected: str
) -> None:
    assert findings(source) == [expected]


@pytest.mark.parametrize(
    "source",
    [
        # Reading and calling.
        "import torch\nx = torch._inductor.utils.GPU_TYPES[0]\nn = len(torch.utils.foo)",
        "import torch\ny = torch.add(torch.ones(2), 1)\nz = torch.sort(y)",
        "from torch._inductor.virtualized import ops\nr = ops.add(1, 2)",
        "import torch\ntorch.ops.aten.add(torch.ones(1), 1)",
        # Public registration.
        "import torch\ntorch.utils.rename_privateuse1_backend('x')",
        "import torch\ntorch._register_device_module('x', object())",
        "import torch\ntorch.utils.generate_methods_for_privateuse1_backend()",
        "import torch\nlib = torch.library.Library('aten', 'IMPL')\nlib.impl('add', len, 'X')",
        """
        from torch._inductor.codegen.common import register_backend_for_device
        from torch._dynamo.device_interface import register_interface_for_device
        register_backend_for_device('x', object, object)
        register_interface_for_device('x', object)
        """,
        # One's own objects, and names that only look like torch's.
        """
        import torch
        from torch._dynamo.device_interface import DeviceInterface
        class Interface(DeviceInterface):
            pass
        Interface.Event = object
        device = torch.device('x')
        device.extra = 1
        """,
        """
        from torch._inductor.utils import GPU_TYPES
        GPU_TYPES = [*GPU_TYPES, 'x']
        GPU_TYPES.append('y')
        """,
        """
        from torch._inductor import utils
        def configure(utils):
            utils.mode = 'x'
        """,
        """
        from torch._inductor import utils
        for utils in range(2):
            utils.bit_length()
        """,
        "from . import torch\ntorch.foo = 1",
        "import torch_acc\ntorch_acc.foo = 1",
        # The compile in progress and torch's statistics.
        """
        from torch._inductor import metrics
        from torch._inductor.virtualized import V
        from torch._dynamo.utils import counters
        V.graph.removed_buffers.add('buf0')
        V.kernel.must_keep_buffers |= {'buf1'}
        metrics.generated_kernel_count += 1
        counters['inductor']['x'] += 1
        counters.clear()
        """,
    ],
)
def test_reading_calling_registering_and_own_objects_are_not_patches(source: str) -> None:
    assert findings(source) == []


@pytest.mark.parametrize("backend", SHIPPED_BACKENDS)
def test_each_shipped_backend_scans_clean(backend: str) -> None:
    assert list(scan_paths([REPO / backend])) == []
    assert main([str(REPO / backend)]) == 0


def run_scan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rfc_shared.testing.monkeypatch_scan", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_command_prints_each_patch_and_exits_1(tmp_path: Path) -> None:
    package = tmp_path / "vendor"
    (package / "_inductor").mkdir(parents=True)
    (package / "__init__.py").write_text("import torch\n")
    (package / "_inductor" / "setup.py").write_text(
        "import torch\ntorch._inductor.utils.GPU_TYPES.append('x')\ntorch.utils.foo = 2\n"
    )
    (package / ".venv").mkdir()
    (package / ".venv" / "site.py").write_text("import torch\ntorch.bar = 1\n")
    done = run_scan(str(package))
    assert done.returncode == 1, done.stderr
    setup = package / "_inductor" / "setup.py"
    assert done.stdout.splitlines() == [
        f"{setup}:2: .append() on torch._inductor.utils.GPU_TYPES",
        f"{setup}:3: assignment to torch.utils.foo",
    ]
    assert done.stderr == "2 files scanned: 2 monkeypatches of torch or Triton\n"


def test_the_command_exits_0_on_a_clean_package(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text(
        "import torch\ntorch.utils.rename_privateuse1_backend('x')\n"
    )
    done = run_scan(str(tmp_path))
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == "1 file scanned: no monkeypatches of torch or Triton\n"


def test_a_missing_folder_is_bad_usage(tmp_path: Path) -> None:
    done = run_scan(str(tmp_path / "missing"))
    assert done.returncode == 2
    assert f"error: {tmp_path / 'missing'}: no such file or directory" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_folder_without_python_is_bad_usage(tmp_path: Path) -> None:
    assert run_scan(str(tmp_path)).returncode == 2


def test_a_file_that_is_not_python_exits_2_after_scanning_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / "patch.py").write_text("import torch\ntorch.foo = 1\n")
    assert main([str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == f"{tmp_path / 'patch.py'}:2: assignment to torch.foo\n"
    assert f"error: {tmp_path / 'broken.py'}:1: not Python" in err


def test_help_names_what_is_reported_and_the_exit_statuses() -> None:
    done = run_scan("--help")
    assert done.returncode == 0
    assert "setattr or delattr" in done.stdout
    assert "1  monkeypatches found" in done.stdout
