"""backend_feature on acc: opting into a feature changes each migrated site;
opting out reverts it; built-in devices answer as on stock torch."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.slice("backend_feature")


def features(*names: str) -> classmethod:
    from torch._dynamo.device_interface import BackendFeature

    chosen = {BackendFeature[name] for name in names}
    return classmethod(lambda cls, device=None: set(chosen))


def derived_is_gpu() -> classmethod:
    from torch._dynamo.device_interface import DeviceInterface

    return classmethod(DeviceInterface.is_gpu.__func__)


@pytest.fixture
def acc(privateuse1_backend: str) -> torch.device:
    return torch.device(privateuse1_backend, 0)


def test_is_gpu_is_the_gpu_feature(acc: torch.device) -> None:
    from torch._inductor.utils import GPU_TYPES, is_gpu

    register(variant(is_gpu=derived_is_gpu(), backend_features=features("GPU")))
    assert is_gpu(acc.type) and acc.type in GPU_TYPES
    register(variant(is_gpu=derived_is_gpu(), backend_features=features()))
    assert not is_gpu(acc.type) and acc.type not in GPU_TYPES


def test_an_interface_that_only_says_is_gpu_has_the_gpu_feature(acc: torch.device) -> None:
    from torch._dynamo.device_interface import BackendFeature, get_backend_features_for_device

    register(variant(is_gpu=lambda: True))
    assert get_backend_features_for_device(acc) == {BackendFeature.GPU}
    register(variant(is_gpu=lambda: False))
    assert get_backend_features_for_device(acc) == set()


def test_fp16_fft_follows_the_feature(acc: torch.device) -> None:
    from torch._refs.fft import _promote_type_fft

    register(variant(backend_features=features("GPU", "FP16_FFT")))
    assert _promote_type_fft(torch.float16, False, acc) == torch.float16
    register(variant(backend_features=features("GPU")))
    with pytest.raises(RuntimeError, match="Unsupported dtype torch.float16"):
        _promote_type_fft(torch.float16, False, acc)


def softmax_match(device: torch.device) -> SimpleNamespace:
    """What prepare_softmax_extra_check() reads of a pattern match."""
    return SimpleNamespace(
        kwargs={"x": SimpleNamespace(meta={"val": SimpleNamespace(device=device)})}
    )


def test_online_softmax_fires_for_a_triton_device_that_opts_in(acc: torch.device) -> None:
    from torch._inductor import config
    from torch._inductor.fx_passes.post_grad import prepare_softmax_extra_check

    from torch_acc.registration import register_inductor_backend

    register_inductor_backend()  # GPU-class acc: Triton scheduling
    with config.patch(online_softmax=True):
        register(variant(backend_features=features("GPU", "ONLINE_SOFTMAX")))
        assert prepare_softmax_extra_check(softmax_match(acc))
        register(variant(backend_features=features("GPU")))  # acc as it ships
        assert not prepare_softmax_extra_check(softmax_match(acc))


def test_optimizer_compile_fallback_follows_graph_capture(acc: torch.device) -> None:
    from torch.optim.optimizer import _captures_graphs

    register(variant(backend_features=features("GPU", "GRAPH_CAPTURE")))
    assert _captures_graphs(acc)
    register(variant(backend_features=features("GPU")))
    assert not _captures_graphs(acc)
    assert _captures_graphs(torch.device("cuda")) and not _captures_graphs(torch.device("cpu"))


BUILTIN = """
import json, torch
from types import SimpleNamespace
from torch._inductor import config
from torch._inductor.fx_passes.post_grad import prepare_softmax_extra_check
from torch._refs.fft import _promote_type_fft

def half_fft(device):
    try:
        return str(_promote_type_fft(torch.float16, False, torch.device(device)))
    except RuntimeError as e:
        return str(e)

names = ["cuda", "xpu", "mtia", "mps", "cpu", "meta", "hpu"]
with config.patch(online_softmax=True):
    softmax = {n: bool(prepare_softmax_extra_check(SimpleNamespace(
        kwargs={"x": SimpleNamespace(meta={"val": SimpleNamespace(device=torch.device(n))})})))
        for n in names}
print(json.dumps({"fft": {n: half_fft(n) for n in names}, "softmax": softmax}))
"""


def test_builtin_devices_get_the_stock_answers() -> None:
    from torch._dynamo.device_interface import BackendFeature

    assert BackendFeature.FP16_FFT  # the slice is applied in this process
    stock = last_json(run_python(BUILTIN, slices="none"))
    assert last_json(run_python(BUILTIN)) == stock
