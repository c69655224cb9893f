"""Conformance probes of slice ``backend_feature``."""

from __future__ import annotations

import importlib

import torch

from rfc_shared.conformance.harness import ProbeFailure, ask_each, check, subject, variant
from rfc_shared.conformance.probes import probe


def _features_module():
    try:
        return importlib.import_module("torch.utils._backend_features")
    except ImportError as e:
        raise ProbeFailure("torch.utils._backend_features does not exist") from e


def _declaring(*names: str) -> classmethod:
    feature = _features_module().BackendFeature
    chosen = frozenset(feature[name] for name in names)
    return classmethod(lambda cls, device=None: chosen)


@probe("backend_feature.gpu", "BackendFeature.GPU is declared through is_gpu()")
def _feature_gpu() -> str:
    features = _features_module()
    answers = ask_each(
        lambda: features.device_has_backend_feature(subject().name, features.BackendFeature.GPU),
        gpu=variant(is_gpu=lambda: True),
        not_gpu=variant(is_gpu=lambda: False),
    )
    check(answers == {"gpu": True, "not_gpu": False}, f"GPU feature answered {answers}")
    return f"BackendFeature.GPU follows is_gpu(): {answers}"


@probe("backend_feature.fp16_fft", "FP16 FFT support is a backend feature")
def _feature_fp16_fft() -> str:
    features = _features_module()
    check(hasattr(features.BackendFeature, "FP16_FFT"), "BackendFeature.FP16_FFT does not exist")
    from torch._refs.fft import _promote_type_fft

    def half_allowed() -> bool:
        try:
            return _promote_type_fft(torch.float16, False, subject().device) == torch.float16
        except RuntimeError:
            return False

    answers = ask_each(
        half_allowed,
        declared=variant(is_gpu=lambda: True, backend_features=_declaring("GPU", "FP16_FFT")),
        empty=variant(is_gpu=lambda: True, backend_features=_declaring("GPU")),
    )
    check(answers == {"declared": True, "empty": False}, f"half FFT allowed: {answers}")
    return f"half-precision FFT follows backend_features(): {answers}"
