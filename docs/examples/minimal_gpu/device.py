"""``torch.mgpu``, the device module: mhost's, plus what a GPU-class device is
asked for (device properties, a raw stream, the wrapper's device guard)."""

from dataclasses import dataclass

import minimal_device as _C
import torch


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


class device:
    """``with torch.mgpu.device(1):`` makes device 1 current."""

    def __init__(self, device) -> None:
        self.idx = -1 if device is None else _index(device)

    def __enter__(self) -> None:
        self.prev_idx = _C.exchange_device(self.idx)

    def __exit__(self, *exc) -> None:
        _C.exchange_device(self.prev_idx)


class Stream(torch.Stream):
    """An mgpu stream. Its DeviceInterface's Stream is what makes Inductor guard
    the device around each kernel launch (device_need_guard)."""

    def __new__(cls, device=None, priority: int = 0, **kwargs):
        if kwargs:  # stream_id=, device_index=, device_type=: an existing stream
            return super().__new__(cls, priority=priority, **kwargs)
        return super().__new__(cls, device=torch.device("mgpu", _index(device)), priority=priority)


@dataclass(frozen=True)
class DeviceProperties:
    # The fields Inductor's heuristics and Triton's target read.
    name: str
    total_memory: int
    multi_processor_count: int
    warp_size: int
    major: int
    minor: int


def get_device_properties(device=None) -> DeviceProperties:
    return DeviceProperties(f"mgpu:{_index(device)}", 2**34, 8, 32, 1, 0)


def get_raw_stream(device_idx: int) -> int:
    return 0  # one stream per device; the interpreter ignores it


def _inductor_backend_init() -> None:
    """Inductor calls this when it first compiles for mgpu."""
    from .inductor import register

    register()
