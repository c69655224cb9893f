"""Conformance probes of slice ``backend_feature``."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any
from unittest import mock

import torch

from rfc_shared.conformance.harness import (
    ask_each,
    check,
    check_follows,
    registry,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


def _feature_enum() -> Any:
    """``torch._dynamo.device_interface.BackendFeature``, with its
    framework-level members; a probe failure where the torch in use has none."""
    interfaces: ModuleType = registry()
    feature = getattr(interfaces, "BackendFeature", None)
    check(
        feature is not None and hasattr(feature, "GPU"),
        "torch._dynamo.device_interface has no BackendFeature with framework-level "
        "members (GPU, ONLINE_SOFTMAX, ...)",
    )
    return feature


def _declaring(*names: str) -> classmethod:
    feature = _feature_enum()
    chosen = {feature[name] for name in names}
    return classmethod(lambda cls, device=None: set(chosen))


@probe("backend_feature.gpu", "BackendFeature.GPU is declared in backend_features() or is_gpu()")
def _feature_gpu() -> str:
    feature = _feature_enum()
    from torch._inductor.codegen.common import has_backend_feature

    derived = classmethod(registry().DeviceInterface.is_gpu.__func__)
    answers = ask_each(
        lambda: has_backend_feature(subject().device, feature.GPU),
        declared=variant(is_gpu=derived, backend_features=_declaring("GPU")),
        undeclared=variant(is_gpu=derived, backend_features=_declaring()),
        is_gpu=variant(is_gpu=lambda: True, backend_features=_declaring()),
        not_is_gpu=variant(is_gpu=lambda: False, backend_features=_declaring("GPU")),
    )
    expected = {"declared": True, "undeclared": False, "is_gpu": True, "not_is_gpu": False}
    told = {
        "declared": "GPU is in backend_features()",
        "undeclared": "backend_features() is empty",
        "is_gpu": "is_gpu() is True, backend_features() empty",
        "not_is_gpu": "is_gpu() is False, GPU in backend_features()",
    }
    check_follows("has_backend_feature(GPU)", answers, expected, told)
    return f"BackendFeature.GPU from backend_features(), is_gpu() deciding: {answers}"


def _follows_the_declaration(feature: str, question: Callable[[], object], what: str) -> str:
    """Asks ``question`` with the backend declaring ``feature`` and with it
    declaring nothing; fails unless the answers are True and False."""
    answers = ask_each(
        question,
        declared=variant(backend_features=_declaring(feature)),
        empty=variant(backend_features=_declaring()),
    )
    told = {"declared": f"{feature} is in backend_features()", "empty": "it declares none"}
    check_follows(what, answers, {"declared": True, "empty": False}, told)
    return f"{what} follows backend_features(): {answers}"


@probe("backend_feature.fp16_fft", "FP16 FFT support is a backend feature")
def _feature_fp16_fft() -> str:
    _feature_enum()
    from torch._refs.fft import _promote_type_fft

    def half_allowed() -> bool:
        try:
            return _promote_type_fft(torch.float16, False, subject().device) == torch.float16
        except RuntimeError:
            return False

    return _follows_the_declaration("FP16_FFT", half_allowed, "half-precision FFT allowed")


@probe("backend_feature.online_softmax", "Inductor's online softmax is a backend feature")
def _feature_online_softmax() -> str:
    _feature_enum()
    from torch._inductor import config
    from torch._inductor.codegen import common
    from torch._inductor.codegen.triton import TritonScheduling
    from torch._inductor.fx_passes.post_grad import prepare_softmax_extra_check

    match = SimpleNamespace(
        kwargs={"x": SimpleNamespace(meta={"val": SimpleNamespace(device=subject().device)})}
    )

    def rewritten() -> bool:
        # Only Triton has online-softmax kernels: asked as of a backend whose
        # registered scheduling is Triton's, whichever code generator the
        # subject registers.
        with (
            config.patch(online_softmax=True),
            mock.patch.object(common, "get_scheduling_for_device", return_value=TritonScheduling),
        ):
            return bool(prepare_softmax_extra_check(match))

    return _follows_the_declaration("ONLINE_SOFTMAX", rewritten, "the online-softmax rewrite")


@probe(
    "backend_feature.optimizer_fallback",
    "A compiled optimizer step falls back to eager by BackendFeature.GRAPH_CAPTURE",
)
def _feature_graph_capture() -> str:
    _feature_enum()
    from torch.optim import optimizer

    captures = getattr(optimizer, "_device_captures_graphs", None)
    check(captures is not None, "torch.optim.optimizer asks for graph capture by device name")
    return _follows_the_declaration(
        "GRAPH_CAPTURE", lambda: captures(subject().device), "the optimizer's eager fallback"
    )


@probe(
    "fake_channels_last.channels_last_convolution",
    "Fake tensors keep the backend's convolutions channels-last by "
    "BackendFeature.CHANNELS_LAST_CONVOLUTION",
)
def _feature_channels_last_convolution() -> str:
    check(
        hasattr(_feature_enum(), "CHANNELS_LAST_CONVOLUTION"),
        "BackendFeature has no CHANNELS_LAST_CONVOLUTION: fake tensors lay out the backend's "
        "convolutions as ATen says, contiguous (the follow-up PR fake_channels_last adds it)",
    )
    from torch._subclasses.fake_tensor import FakeTensorMode

    def channels_last() -> bool:
        # What Inductor plans a channels-last convnet with: the layout fake
        # tensors give the backend's (overrideable) convolution.
        with FakeTensorMode():
            x = torch.empty(2, 3, 4, 4, device=subject().device)
            weight = torch.empty(5, 3, 1, 1, device=subject().device)
            out = torch.ops.aten.convolution.default(
                x.to(memory_format=torch.channels_last),
                weight,
                None,
                [1, 1],
                [0, 0],
                [1, 1],
                False,
                [0, 0],
                1,
            )
        return out.is_contiguous(memory_format=torch.channels_last) and not out.is_contiguous()

    return _follows_the_declaration(
        "CHANNELS_LAST_CONVOLUTION", channels_last, "a convolution's channels-last result"
    )
