"""torch_acc reaches torch.compile through public extension points only."""

from pathlib import Path

import pytest

from rfc_shared.testing.monkeypatch_scan import scan_paths, scan_source


ACC_SOURCES = [
    Path(__file__).parents[1] / "torch_acc",
    Path(__file__).parents[1] / "torch_acc_triton",
]


def test_torch_acc_patches_nothing() -> None:
    findings = list(scan_paths(ACC_SOURCES))
    assert not findings, "\n".join(map(str, findings))


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ntorch._inductor.utils.GPU_TYPES.append('acc')",
        "import torch._inductor.utils as iu\niu.GPU_TYPES += ['acc']",
        "from torch._inductor import utils\nutils.is_gpu = lambda d: True",
        "from torch._inductor.utils import GPU_TYPES\nGPU_TYPES.extend(['acc'])",
        "import torch\nsetattr(torch.utils._triton, 'has_triton', lambda: True)",
        "import torch._dynamo.variables.user_defined as u\n"
        "u.UserDefinedClassVariable._in_graph_classes.cache_clear()",
        "import torch\ndel torch._C._dynamo",
        "import triton.backends\ntriton.backends.backends['acc'] = object()",
        "from triton.backends import backends\nbackends.update(acc=object())",
        "import torch._dynamo.device_interface as di\ndi.device_interfaces['acc'] = object",
    ],
)
def test_planted_patches_are_caught(source: str) -> None:
    assert scan_source(source, Path("planted.py")), source


def test_calling_registration_functions_is_not_a_patch() -> None:
    source = (
        "from torch._inductor.codegen.common import register_backend_for_device\n"
        "register_backend_for_device('acc', object, object)\n"
        "import torch._dynamo.device_interface as di\n"
        "di.register_interface_for_device('acc', object)\n"
    )
    assert scan_source(source, Path("ok.py")) == []
