"""The acc driver: the active one once ``torch_acc`` is imported over host memory
(GPU-class mode, kernels interpreted); over CUDA memory CUDA's driver is."""

from __future__ import annotations

import sys
from typing import Any

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase


def _torch_acc() -> Any:
    return sys.modules.get("torch_acc")


class AccDriver(DriverBase):
    @classmethod
    def is_active(cls) -> bool:
        torch_acc = _torch_acc()
        return torch_acc is not None and torch_acc.mode == "gpu"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.get_current_device = torch.acc.current_device
        self.set_current_device = torch.acc.set_device
        self.get_current_stream = _torch_acc()._C._raw_stream

    def map_python_to_cpp_type(self, ty: str) -> str:
        raise NotImplementedError("acc has no native kernel launcher")

    def get_current_target(self) -> GPUTarget:
        props = self.torch.acc.get_device_properties()
        return GPUTarget("acc", props.major * 10 + props.minor, props.warp_size)

    def get_active_torch_device(self) -> Any:
        return self.torch.device("acc", self.get_current_device())

    def get_device_interface(self) -> Any:
        return self.torch.acc

    def get_benchmarker(self) -> Any:
        from triton.testing import do_bench

        return do_bench

    def get_empty_cache_for_benchmark(self) -> Any:
        return self.torch.empty(1024 * 1024, dtype=self.torch.int, device="acc")

    def clear_cache(self, cache: Any) -> None:
        cache.zero_()
