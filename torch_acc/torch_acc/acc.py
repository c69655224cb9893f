"""``torch.acc``: the runtime API of the acc device, shaped like ``torch.cuda``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from . import _C
from ._mode import is_cuda_mode


__all__ = [
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "Event",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "Stream",
    "current_device",
    "current_stream",
    "device",
    "device_count",
    "get_device_properties",
    "get_rng_state",
    "initial_seed",
    "is_available",
    "manual_seed",
    "manual_seed_all",
    "memory_allocated",
    "seed",
    "set_device",
    "set_rng_state",
    "set_stream",
    "stream",
    "synchronize",
]

_Device = torch.device | str | int | None


def _index(device: _Device) -> int:
    """The acc device index ``device`` names; None is the current device."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "acc":
        raise ValueError(f"expected an acc device, got {device}")
    return current_device() if device.index is None else device.index


def is_available() -> bool:
    # Over host memory acc always has its devices; over CUDA memory, CUDA's.
    return not is_cuda_mode() or _C._device_count() > 0


def is_initialized() -> bool:
    return True


def _lazy_init() -> None:
    pass


def _is_in_bad_fork() -> bool:
    return False


def device_count() -> int:
    return _C._device_count()


def current_device() -> int:
    return _C._get_device()


def set_device(device: _Device) -> None:
    _C._set_device(_index(device))


class device:
    """Context manager that makes ``device`` the current acc device."""

    def __init__(self, device: _Device) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        self.prev_idx = _C._exchange_device(self.idx)

    def __exit__(self, *exc: object) -> bool:
        _C._exchange_device(self.prev_idx)
        return False


# The name Inductor's generated wrappers use (as torch.cuda._DeviceGuard).
_DeviceGuard = device


def synchronize(device: _Device = None) -> None:
    """Waits for all work on ``device``. Over host memory acc runs every
    operation to completion before returning, so this only validates it."""
    torch.accelerator.synchronize(_index(device))


class Stream(torch.Stream):
    """An acc stream: a CUDA stream over CUDA memory; over host memory, where
    work completes in order, an id only."""

    def __new__(cls, device: _Device = None, priority: int = 0, **kwargs: Any) -> Stream:
        if kwargs:  # stream_id=, device_index=, device_type=: wrap an existing stream
            return super().__new__(cls, priority=priority, **kwargs)
        return super().__new__(cls, device=torch.device("acc", _index(device)), priority=priority)


class Event(torch.Event):
    """An acc event: a CUDA event over CUDA memory; over host memory a
    timestamp, complete as soon as recorded."""

    def __new__(
        cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> Event:
        return super().__new__(
            cls,
            device=torch.device("acc", current_device()),
            enable_timing=enable_timing,
            blocking=blocking,
            interprocess=interprocess,
        )

    def elapsed_time(self, end_event: torch.Event) -> float:
        """Milliseconds between this event and ``end_event``, both recorded."""
        return _C._elapsed_time(self, end_event)


def current_stream(device: _Device = None) -> Stream:
    s = torch.accelerator.current_stream(_index(device))
    return Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


def default_stream(device: _Device = None) -> Stream:
    return Stream(
        stream_id=0, device_index=_index(device), device_type=current_stream().device_type
    )


def set_stream(stream: torch.Stream) -> None:
    if stream is not None:
        torch.accelerator.set_stream(stream)


@contextlib.contextmanager
def stream(stream: torch.Stream | None) -> Iterator[None]:
    """Context manager that makes ``stream`` current on its device."""
    if stream is None:
        yield
        return
    previous = current_stream(stream.device_index)
    with device(stream.device_index):
        set_stream(stream)
        try:
            yield
        finally:
            set_stream(previous)


@dataclass(frozen=True)
class _AccDeviceProperties:
    """What ``torch.acc.get_device_properties`` returns."""

    name: str
    total_memory: int
    multi_processor_count: int
    warp_size: int
    major: int
    minor: int


def _host_device_properties(index: int) -> _AccDeviceProperties:
    return _AccDeviceProperties(
        name=f"acc:{index} (host memory)",
        total_memory=16 * 1024**3,
        multi_processor_count=8,
        warp_size=32,
        major=1,
        minor=0,
    )


# Over CUDA memory acc:i is CUDA device i, properties included.
_device_properties = torch.cuda.get_device_properties if is_cuda_mode() else _host_device_properties


def get_device_properties(device: _Device = None) -> Any:
    index = _index(device)
    if not 0 <= index < device_count():
        raise IndexError(f"acc device index {index} out of range")
    return _device_properties(index)


class _TensorType(type):
    """The type of acc's dtype tensor classes, the ``torch.cuda.FloatTensor``
    family: ``torch.acc.FloatTensor(2, 3)`` makes an uninitialized float32 acc
    tensor, ``torch.acc.FloatTensor([1, 2])`` one from data, and
    ``isinstance(t, torch.acc.FloatTensor)`` checks device and dtype."""

    dtype: torch.dtype

    def __call__(cls, *args: Any) -> torch.Tensor:
        if len(args) == 1 and not isinstance(args[0], int):
            return torch.tensor(args[0], dtype=cls.dtype, device="acc")
        return torch.empty(args, dtype=cls.dtype, device="acc")

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, torch.Tensor) and obj.device.type == "acc" and obj.dtype == cls.dtype


def _tensor_class(name: str, dtype: torch.dtype) -> _TensorType:
    return _TensorType(name, (), {"dtype": dtype, "__module__": "torch.acc", "__qualname__": name})


FloatTensor = _tensor_class("FloatTensor", torch.float32)
DoubleTensor = _tensor_class("DoubleTensor", torch.float64)
HalfTensor = _tensor_class("HalfTensor", torch.float16)
BFloat16Tensor = _tensor_class("BFloat16Tensor", torch.bfloat16)
ByteTensor = _tensor_class("ByteTensor", torch.uint8)
CharTensor = _tensor_class("CharTensor", torch.int8)
ShortTensor = _tensor_class("ShortTensor", torch.int16)
IntTensor = _tensor_class("IntTensor", torch.int32)
LongTensor = _tensor_class("LongTensor", torch.int64)
BoolTensor = _tensor_class("BoolTensor", torch.bool)

tensor_classes = (
    FloatTensor,
    DoubleTensor,
    HalfTensor,
    BFloat16Tensor,
    ByteTensor,
    CharTensor,
    ShortTensor,
    IntTensor,
    LongTensor,
    BoolTensor,
)


def memory_allocated(device: _Device = None) -> int:
    return _C._memory_allocated(_index(device))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16]


def _generator(device: _Device) -> torch.Generator:
    return _C._default_generator(_index(device))


def manual_seed(seed: int) -> None:
    _generator(None).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for index in range(device_count()):
        _generator(index).manual_seed(int(seed))


def seed() -> None:
    _generator(None).seed()


def initial_seed() -> int:
    return _generator(None).initial_seed()


def get_rng_state(device: _Device = "acc") -> torch.Tensor:
    return _generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: _Device = "acc") -> None:
    _generator(device).set_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states: list[torch.Tensor]) -> None:
    for index, state in enumerate(new_states):
        set_rng_state(state, index)
