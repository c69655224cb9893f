"""Conformance probes of slice ``backend_feature``."""

from __future__ import annotations

import importlib

import torch

from rfc_shared.conformance.harness import (
    ProbeFailure,
    ask_each,
    check,
    registry,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


def _utils():
    return importlib.import_module("torch._inductor.utils")


def _backend_feature_enum():
    for where in ("torch._dynamo.device_interface", "torch._inductor.codegen.common"):
        enum = getattr(importlib.import_module(where), "BackendFeature", None)
        if enum is not None and hasattr(enum, "GPU"):
            return enum
    raise ProbeFailure("BackendFeature.GPU does not exist")


@probe("backend_feature.gpu", "BackendFeature.GPU decides is_gpu")
def _feature_gpu() -> str:
    feature = _backend_feature_enum()
    name = subject().name
    derived = classmethod(registry().DeviceInterface.is_gpu.__func__)  # is_gpu from features
    answers = ask_each(
        lambda: _utils().is_gpu(name),
        declared=variant(is_gpu=derived, backend_features=lambda device=None: {feature.GPU}),
        empty=variant(is_gpu=derived, backend_features=lambda device=None: set()),
    )
    check(answers == {"declared": True, "empty": False}, f"is_gpu({name!r}) answered {answers}")
    return f"is_gpu follows backend_features(): {answers}"


@probe("backend_feature.fp16_fft", "FP16 FFT support is a backend feature")
def _feature_fp16_fft() -> str:
    feature = _backend_feature_enum()
    check(hasattr(feature, "FP16_FFT"), "BackendFeature.FP16_FFT does not exist")
    from torch._refs.fft import _promote_type_fft

    def half_allowed() -> bool:
        try:
            return _promote_type_fft(torch.float16, False, subject().device) == torch.float16
        except RuntimeError:
            return False

    answers = ask_each(
        half_allowed,
        declared=variant(backend_features=lambda device=None: {feature.FP16_FFT}),
        empty=variant(backend_features=lambda device=None: set()),
    )
    check(answers == {"declared": True, "empty": False}, f"half FFT allowed: {answers}")
    return f"half-precision FFT follows backend_features(): {answers}"
