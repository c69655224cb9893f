import sys

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase


class MgpuDriver(DriverBase):
    @classmethod
    def is_active(cls) -> bool:
        # Active once the mgpu backend is loaded; discovery imports this module
        # whenever Triton is imported, so it imports nothing heavy itself.
        return "minimal_gpu" in sys.modules

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.get_current_device = torch.mgpu.current_device
        self.set_current_device = torch.mgpu.set_device
        self.get_current_stream = torch.mgpu.get_raw_stream

    def get_current_target(self) -> GPUTarget:
        props = self.torch.mgpu.get_device_properties()
        return GPUTarget("mgpu", props.major * 10 + props.minor, props.warp_size)

    def get_active_torch_device(self):
        return self.torch.device("mgpu", self.get_current_device())

    def get_device_interface(self):
        return self.torch.mgpu

    def map_python_to_cpp_type(self, ty: str) -> str:
        raise NotImplementedError("mgpu has no native kernel launcher")

    def get_benchmarker(self):
        from triton.testing import do_bench

        return do_bench

    def get_empty_cache_for_benchmark(self):
        return self.torch.empty(2**20, dtype=self.torch.int, device="mgpu")

    def clear_cache(self, cache) -> None:
        cache.zero_()
