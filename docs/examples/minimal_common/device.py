"""The functions every device module of the two examples has: what PyTorch,
Dynamo and Inductor call on ``torch.mhost`` and ``torch.mgpu``."""

import minimal_device as _C
import torch


# What ``from minimal_common.device import *`` gives a device module.
__all__ = [
    "_is_in_bad_fork",
    "_lazy_init",
    "current_device",
    "device",
    "device_count",
    "get_amp_supported_dtype",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed_all",
    "set_device",
    "synchronize",
]


def _index(device) -> int:
    if device is None:
        return _C.current_device()
    if isinstance(device, int):
        return device
    index = torch.device(device).index
    return _C.current_device() if index is None else index


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def _lazy_init() -> None:
    pass


def _is_in_bad_fork() -> bool:  # torch.manual_seed asks, with manual_seed_all
    return False


def manual_seed_all(seed: int) -> None:
    pass  # the fallback draws from the CPU's generator, which torch.manual_seed seeds


def device_count() -> int:
    return _C.device_count()


def current_device() -> int:
    return _C.current_device()


def set_device(device) -> None:
    _C.set_device(_index(device))


def synchronize(device=None) -> None:
    pass  # every kernel has finished when it returns


def get_amp_supported_dtype() -> list[torch.dtype]:  # torch.autocast("mhost") asks
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = False) -> bool:
    return True  # Inductor asks before it writes bfloat16 Triton kernels


class device:
    """``with torch.mhost.device(1):`` makes device 1 current."""

    def __init__(self, device) -> None:
        self.idx = -1 if device is None else _index(device)

    def __enter__(self) -> None:
        self.prev_idx = _C.exchange_device(self.idx)

    def __exit__(self, *exc) -> None:
        _C.exchange_device(self.prev_idx)
