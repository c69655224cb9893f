"""A PrivateUse1 backend for tests that need one renamed.

The PrivateUse1 rename happens once per process. When the reference backend
``torch_acc`` is installed it is the backend; otherwise PyTorch's pure-Python
PrivateUse1 scaffolding provides a minimal ``acc`` device (no kernels).
"""

from __future__ import annotations

import importlib
import importlib.util

import torch


FALLBACK_NAME = "acc"


def ensure_privateuse1_backend() -> str:
    """Return the PrivateUse1 backend's name, renaming it first if needed."""
    name = torch._C._get_privateuse1_backend_name()
    if name != "privateuseone":
        return name
    if importlib.util.find_spec("torch_acc") is not None:
        importlib.import_module("torch_acc")
    else:
        from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

        _setup_privateuseone_for_python_backend(FALLBACK_NAME)
    return torch._C._get_privateuse1_backend_name()
