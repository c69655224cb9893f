"""``torch.mgpu``, the device module: mhost's, plus what a GPU-class device is
asked for (a Stream class, device properties, a raw stream)."""

from dataclasses import dataclass

import torch
from minimal_common.device import *  # noqa: F403  (the functions every device module has)
from minimal_common.device import _index


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


def get_device_interface() -> type:
    """Dynamo's registry calls this when it first needs mgpu, possibly while
    ``import torch._dynamo`` is running: it imports the interface module only."""
    from .interface import MgpuInterface

    return MgpuInterface


def _inductor_backend_init() -> None:
    """Inductor calls this when it first compiles for mgpu."""
    from .inductor import register

    register()
