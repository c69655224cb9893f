"""What acc's generated wrappers call at run time (kept free of Inductor imports)."""

from .. import _C


def get_raw_stream(device_idx: int) -> int:
    return _C._raw_stream(device_idx)
