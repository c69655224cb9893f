"""``torch.sealed``: the runtime API of the sealed device.

Four functions, the least a PrivateUse1 device module has: no streams, no
events, no ``synchronize`` (every operation completes before it returns) and
no device properties.
"""

from __future__ import annotations

import torch

from . import _C


__all__ = ["current_device", "device_count", "is_available", "set_device"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return _C._device_count()


def current_device() -> int:
    return _C._get_device()


def set_device(device: torch.device | str | int) -> None:
    if not isinstance(device, int):
        device = torch.device(device)
        if device.type != "sealed":
            raise ValueError(f"expected a sealed device, got {device}")
        device = current_device() if device.index is None else device.index
    _C._set_device(device)


# What generated code enters around each of sealed's kernels (see
# torch_sealed._inductor): the memory of the sealed tensors among the
# arguments is open for the block.
_unsealed = _C._unsealed
