"""Which kind of device acc is: ``TORCH_ACC_MODE``, read once at import.

- ``gpu`` (the default): a GPU-class, Triton-backed device over host memory;
  its Triton kernels run through Triton's interpreter.
- ``host``: a host-class device, like OpenReg; Inductor generates C++ kernels.
- ``cuda`` (only on request): acc:i is CUDA device i under another name: CUDA
  memory, CUDA streams and events, Triton kernels compiled by Triton's NVIDIA
  backend.

In every mode, importing torch_acc renames PrivateUse1, which makes it ATen's
one accelerator; the autograd engine follows that one accelerator, so CUDA's
own backward fails in that process. A comparison of acc with cuda runs each
side in a process of its own.
"""

import importlib.util
import os

import torch


MODES = ("cuda", "gpu", "host")


def _cuda_usable() -> bool:
    return importlib.util.find_spec("torch_acc._C_cuda") is not None and torch.cuda.is_available()


def _read_mode() -> str:
    value = os.environ.get("TORCH_ACC_MODE", "").strip().lower()
    if not value:
        return "gpu"
    if value not in MODES:
        raise ValueError(f"TORCH_ACC_MODE={value!r} is not one of {', '.join(MODES)}")
    if value == "cuda" and not _cuda_usable():
        raise RuntimeError(
            "TORCH_ACC_MODE=cuda needs a usable CUDA device and torch_acc built with CUDA "
            "(its torch_acc._C_cuda extension); use gpu or host instead"
        )
    return value


mode = _read_mode()


def is_gpu_mode() -> bool:
    """Whether acc is GPU-class (Triton kernels, streams, device guards)."""
    return mode in ("cuda", "gpu")


def is_cuda_mode() -> bool:
    """Whether acc's memory is CUDA memory."""
    return mode == "cuda"
