"""acc's ``DeviceInterface``.

The class is duck-typed: it does not inherit from
``torch._dynamo.device_interface.DeviceInterface`` and this module does not
import ``torch._dynamo``, so that ``import torch_acc`` stays light.
``torch_acc.registration.device_interface()`` makes it a DeviceInterface
subclass when Dynamo first asks ``torch.acc.get_device_interface()``. Dynamo
and Inductor call exactly these methods.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from .. import _C, acc
from .._mode import is_cuda_mode, is_gpu_mode


# c10::DeviceType::CUDA, as torch.cuda.Stream().device_type reports it.
_CUDA_DEVICE_TYPE = 1


def _cuda_graphs() -> Any:
    """CUDA's graph capture operations, as graph trees call them on cuda.
    Imported when a graph is recorded, when Dynamo is loaded anyway."""
    from torch._dynamo.device_interface import CudaInterface

    return CudaInterface.graph_capture()


def _cuda_stream(stream: torch.Stream) -> torch.cuda.Stream:
    """The CUDA stream an acc stream is (over CUDA memory acc:i is CUDA device i)."""
    return torch.cuda.Stream(
        stream_id=stream.stream_id,
        device_index=stream.device_index,
        device_type=_CUDA_DEVICE_TYPE,
    )


class _AccGraphCapture:
    """acc's graph capture operations (``DeviceInterface.graph_capture()``,
    duck-typed like the interface). Over CUDA memory acc's kernels run on CUDA
    streams and its memory comes from CUDA's caching allocator, so CUDA graphs
    record them and CUDA's graph pools hold their memory: every operation is
    CUDA's, acc:i being CUDA device i."""

    Graph = torch.cuda.CUDAGraph
    graph_pool_handle = staticmethod(torch.cuda.graph_pool_handle)
    memory_snapshot = staticmethod(torch.cuda.memory_snapshot)

    def capture(
        self,
        graph: torch.cuda.CUDAGraph,
        pool: tuple[int, int] | None = None,
        stream: torch.Stream | None = None,
        capture_error_mode: str = "global",
    ) -> torch.cuda.graph:
        return torch.cuda.graph(
            graph,
            pool=pool,
            stream=None if stream is None else _cuda_stream(stream),
            capture_error_mode=capture_error_mode,
        )

    def allocate_to_graph_pool(self, device: int, pool: tuple[int, int]) -> Any:
        return _cuda_graphs().allocate_to_graph_pool(device, pool)

    def get_graph_pool_state(self, device: int, pool: tuple[int, int]) -> Any:
        return _cuda_graphs().get_graph_pool_state(device, pool)

    def set_graph_pool_state(
        self, device: int, state: Any, live_storages: list[int], dead_data_ptrs: list[int]
    ) -> None:
        _cuda_graphs().set_graph_pool_state(device, state, live_storages, dead_data_ptrs)
        # CUDA's allocator gave the live storages DataPtrs of its own, which
        # say CUDA; an acc tensor can only be set on a storage that says acc.
        _C._label_storages_as_acc(live_storages, device)

    def check_graph_pool_live_allocations(
        self, device: int, pool: tuple[int, int], data_ptrs: set[int]
    ) -> bool:
        return _cuda_graphs().check_graph_pool_live_allocations(device, pool, data_ptrs)

    # acc's blocks are CUDA's caching allocator's, with its deleter.
    def owns_graph_pool_block(self, storage: int) -> bool:
        return _cuda_graphs().owns_graph_pool_block(storage)

    def free_graph_pool_block(self, storage: int) -> None:
        _cuda_graphs().free_graph_pool_block(storage)

    def recording_setup_context(self, *, warmup: bool) -> Any:
        # acc's matmuls and convolutions are cuBLAS's and cuDNN's.
        if not is_cuda_mode():
            return contextlib.nullcontext()
        return _cuda_graphs().recording_setup_context(warmup=warmup)

    def recording_execution_context(self, *, capture: bool, record_history: bool = False) -> Any:
        if not is_cuda_mode():
            return contextlib.nullcontext()
        return _cuda_graphs().recording_execution_context(
            capture=capture, record_history=record_history
        )

    def tensor_from_storage(
        self, metadata: dict[str, Any], storage: torch.UntypedStorage
    ) -> torch.Tensor:
        return _C._tensor_from_storage(
            storage,
            metadata["dtype"],
            metadata["size"],
            metadata["stride"],
            metadata["storage_offset"],
        )


_GRAPHS = _AccGraphCapture()


def settle_convolution_layout(keep_channels_last: bool) -> bool:
    """Whether acc's convolutions keep channels-last, settled by the first
    caller for the rest of the process: fake tensors, and so Inductor, must
    expect of each convolution what acc's kernels return.

    Where acc keeps it, a 2d or 3d convolution's results are channels-last
    where the input or the weight is, in real floating-point dtypes but
    float64, as cuDNN's are; otherwise they are contiguous, as ATen promises
    fake tensors for every PrivateUse1 device. acc's interface settles it the
    first time the torch in use asks what acc has (``backend_features()``,
    before any fake tensor can expect channels-last); registering the
    interface after Dynamo traced without it settles it contiguous.
    """
    return _C._settle_channels_last_convolutions(keep_channels_last)


class DeviceInterface:
    device = acc.device
    Event = acc.Event
    Stream = acc.Stream

    class Worker:
        """Device queries that work in compile workers, which must not touch
        the device runtime; acc's queries are plain host reads."""

        @staticmethod
        def set_device(device: int) -> None:
            acc.set_device(device)

        @staticmethod
        def current_device() -> int:
            return acc.current_device()

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> Any:
            return acc.get_device_properties(device)

    # The runtime functions are torch.acc's own, as CudaInterface binds
    # torch.cuda's. Each behaves like torch.cuda's function of the same name,
    # so acc names them in dynamo_traced_methods (Dynamo then traces a call of
    # torch.acc.current_stream() like torch.cuda.current_stream()), except the
    # three it lists to fold below: a function takes one rule.
    current_device = staticmethod(acc.current_device)
    set_device = staticmethod(acc.set_device)
    device_count = staticmethod(acc.device_count)
    is_available = staticmethod(acc.is_available)
    stream = staticmethod(acc.stream)
    current_stream = staticmethod(acc.current_stream)
    set_stream = staticmethod(acc.set_stream)
    synchronize = staticmethod(acc.synchronize)
    get_device_properties = staticmethod(acc.get_device_properties)

    # What Dynamo folds into constants while tracing (current_device with a
    # guard), and the dtype tensor classes it puts in the graph.
    dynamo_constant_fold_fns = (acc.is_available, acc.get_device_properties)
    dynamo_constant_fold_fns_need_guards = (acc.current_device,)
    dynamo_traced_methods = (
        "set_device",
        "device_count",
        "stream",
        "current_stream",
        "set_stream",
        "synchronize",
    )

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        return _C._exchange_device(device)

    @staticmethod
    def exchange_device(device: int) -> int:
        return _C._exchange_device(device)

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        acc.set_stream(
            acc.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type)
        )

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        return _C._raw_stream(device_idx)

    @staticmethod
    def get_compute_capability(device: torch.types.Device = None) -> int:
        props = acc.get_device_properties(device)
        return props.major * 10 + props.minor

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True

    @classmethod
    def is_dtype_supported(cls, dtype: torch.dtype, including_emulation: bool = False) -> bool:
        return True

    @staticmethod
    def memory_allocated(device: torch.types.Device = None) -> int:
        return acc.memory_allocated(device)

    @staticmethod
    def is_gpu() -> bool:
        # Also declared as BackendFeature.GPU below; a torch without
        # backend_features() (stock 2.15) asks this method only.
        return is_gpu_mode()

    @staticmethod
    def backend_features(device: torch.types.Device = None) -> set[Any]:
        """The framework-level BackendFeature members acc has (slice
        ``backend_feature``; only a torch that has them calls this).

        Channels-last convolutions where the torch in use asks for them.
        GPU-class in the gpu and cuda modes. Online softmax and graph capture
        over CUDA memory only: Triton's interpreter, which runs acc's kernels
        in gpu mode, cannot run Inductor's looped online-softmax kernels, and
        graphs are CUDA graphs.
        """
        from torch._dynamo.device_interface import BackendFeature

        features = set()
        # The member comes with the fake_channels_last follow-up.
        channels_last = getattr(BackendFeature, "CHANNELS_LAST_CONVOLUTION", None)
        if settle_convolution_layout(keep_channels_last=channels_last is not None):
            features.add(channels_last)
        if not is_gpu_mode():
            return features
        if not is_cuda_mode():
            return features | {BackendFeature.GPU}
        return features | {
            BackendFeature.GPU,
            BackendFeature.GRAPH_CAPTURE,
            BackendFeature.ONLINE_SOFTMAX,
        }

    @staticmethod
    def get_cpp_device_options(
        aot_mode: bool, compile_only: bool
    ) -> tuple[list[str], list[str], list[str], list[str], list[str], list[str], list[str]]:
        """What C++ that works on acc memory builds with: the options of the
        device whose memory acc's is (the CPU's, CUDA's over CUDA memory) and
        acc's define, which acc's generated C++ checks. Only Inductor calls it."""
        from torch._inductor.cpp_builder import get_cpp_torch_device_options

        peer = "cuda" if is_cuda_mode() else "cpu"
        definitions, *options = get_cpp_torch_device_options(peer, aot_mode, compile_only)
        return ([*definitions, "USE_ACC"], *options)  # type: ignore[return-value]

    @staticmethod
    def is_triton_capable(device: torch.types.Device = None) -> bool:
        return is_gpu_mode()

    @classmethod
    def raise_if_triton_unavailable(cls, device: torch.types.Device = None) -> None:
        from torch._dynamo.exc import TritonUnavailableError  # only Dynamo calls this

        if not is_gpu_mode():
            raise TritonUnavailableError("acc runs Inductor's C++ kernels in host mode, not Triton")
        import triton.backends

        if "acc" not in triton.backends.backends:
            raise TritonUnavailableError(
                "Triton has no 'acc' backend: reinstall torch-acc, which provides it "
                "through the 'triton.backends' entry point"
            )

    # Graph capture (torch.compile(mode="reduce-overhead")): over CUDA memory
    # the operations of _GRAPHS (CUDA's), declared as BackendFeature.GRAPH_CAPTURE
    # in backend_features(); over host memory acc has no graphs and declares none.
    @staticmethod
    def graph_capture() -> _AccGraphCapture | None:
        return _GRAPHS if is_cuda_mode() else None
