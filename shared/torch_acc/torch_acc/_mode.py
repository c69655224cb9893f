"""Which kind of device acc is: ``TORCH_ACC_MODE``, read once at import.

- ``gpu`` (default): a GPU-class, Triton-backed device; without a GPU its
  Triton kernels run through Triton's interpreter on host memory.
- ``host``: a host-class device, like OpenReg; Inductor generates C++ kernels.
"""

import os


MODES = ("gpu", "host")


def _read_mode() -> str:
    value = os.environ.get("TORCH_ACC_MODE", "gpu").strip().lower() or "gpu"
    if value not in MODES:
        raise ValueError(f"TORCH_ACC_MODE={value!r} is not one of {', '.join(MODES)}")
    return value


mode = _read_mode()


def is_gpu_mode() -> bool:
    return mode == "gpu"
