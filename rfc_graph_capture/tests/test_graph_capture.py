"""graph_capture on acc: mode="reduce-overhead" asks the backend's DeviceInterface
whether to record graphs, and graph trees record them through it.

acc over host memory (this machine) has no graphs: its own interface does not
declare graph capture. A variant registered on top of it does, and its graph
operations log what the tree manager asks: its capture runs the work as it is
queued and its replay does nothing. The real capture, over CUDA memory, is
``torch_acc/tests/test_cuda_mode.py`` on a GPU.

Host memory has no graph pool that keeps a recording's blocks, so the tests
here read values only before a later call can free them and mark their inputs
static (a replay copies non-static inputs into the recording's input buffers).
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import torch

from rfc_shared.conformance.harness import base_interface, register, variant


pytestmark = pytest.mark.slice("graph_capture")

# Graph trees invalidate the outputs of an earlier generation with storage
# helpers torch registers from its CUDA extension: a CPU-only build has none.
needs_storage_helpers = pytest.mark.skipif(
    not all(
        hasattr(torch._C, name)
        for name in ("_set_storage_access_error_msg", "_set_storage_data_ptr_access_error_msg")
    ),
    reason="graph trees' storage helpers need a torch built with CUDA",
)


@pytest.fixture
def acc(privateuse1_backend: str) -> str:
    from torch_acc.registration import device_interface, register_inductor_backend

    register(device_interface())
    register_inductor_backend()
    torch._dynamo.reset()
    yield privateuse1_backend
    torch._dynamo.reset()


@pytest.fixture
def skips() -> Any:
    """The number of graphs Inductor did not record, read when called."""
    from torch._dynamo.utils import counters

    counters.clear()
    return lambda: counters["inductor"]["cudagraph_skips"]


class _Graph:
    def __init__(self, log: list[Any]) -> None:
        self.log = log
        log.append("Graph")

    def replay(self) -> None:
        self.log.append("replay")


def capturing(log: list[Any]) -> type:
    """acc's interface plus graph capture whose operations log their calls."""
    from torch._dynamo.device_interface import BackendFeature
    from torch._dynamo.graph_capture_interface import GraphCaptureInterface

    import torch_acc

    state = object()

    @contextlib.contextmanager
    def capture_into(
        graph: _Graph, pool: Any = None, stream: Any = None, capture_error_mode: str = "global"
    ):
        log.append(("capture", pool, capture_error_mode))
        with torch_acc.acc.stream(stream):
            yield

    @contextlib.contextmanager
    def allocate(device: int, pool: tuple[int, int]):
        log.append(("allocate_to_graph_pool", device, pool))
        yield

    def restore(device: int, pool_state: object, live: list, dead: list) -> None:
        log.append(("set_graph_pool_state", pool_state is state, len(live), len(dead)))

    class Operations(GraphCaptureInterface):
        def Graph(self) -> _Graph:
            return _Graph(log)

        capture = staticmethod(capture_into)
        graph_pool_handle = staticmethod(lambda: (0, 7))
        allocate_to_graph_pool = staticmethod(allocate)
        get_graph_pool_state = staticmethod(
            lambda device, pool: log.append("get_graph_pool_state") or state
        )
        set_graph_pool_state = staticmethod(restore)
        check_graph_pool_live_allocations = staticmethod(lambda device, pool, ptrs: True)
        memory_snapshot = staticmethod(lambda: [])
        owns_graph_pool_block = staticmethod(lambda storage: True)
        # A real pool would take the block back; acc's host memory stays with its owner.
        free_graph_pool_block = staticmethod(lambda storage: log.append("free_graph_pool_block"))

    operations = Operations()
    declared = base_interface().backend_features() | {BackendFeature.GRAPH_CAPTURE}
    return variant(
        backend_features=lambda device=None: set(declared),
        graph_capture=lambda: operations,
    )


def _layer(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.softmax((x @ w).relu() + 1, -1)


def _inputs(acc: str) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    x, w = torch.randn(8, 16), torch.randn(16, 16)
    x, w = x.to(acc), w.to(acc)
    torch._dynamo.mark_static_address(x)
    torch._dynamo.mark_static_address(w)
    return x, w


def test_a_device_without_graph_capture_is_skipped_by_name(acc: str, skips: Any) -> None:
    import torch._inductor.cudagraph_utils as cudagraph_utils

    x, w = _inputs(acc)
    compiled = torch.compile(_layer, mode="reduce-overhead")
    torch.testing.assert_close(compiled(x, w).cpu(), _layer(x, w).cpu())
    assert skips() == 1
    node = torch.fx.Graph().placeholder("x")
    reason = cudagraph_utils.check_multiple_devices_or_any_cpu_nodes({torch.device(acc, 0): node})
    assert (
        reason
        == f"skipping cudagraphs due to {acc} device (x), which does not support graph capture"
    )


@needs_storage_helpers
def test_reduce_overhead_records_and_replays_through_the_interface(acc: str, skips: Any) -> None:
    log: list[Any] = []
    register(capturing(log))
    x, w = _inputs(acc)
    want = _layer(x, w).cpu()
    compiled = torch.compile(_layer, mode="reduce-overhead")

    warm = compiled(x, w)
    torch.testing.assert_close(warm.cpu(), want)
    assert ("allocate_to_graph_pool", 0, (0, 7)) in log and "replay" not in log

    recorded = compiled(x, w)
    torch.testing.assert_close(recorded.cpu(), want)
    assert log.count("Graph") == 2  # the tree manager's, and this graph's
    assert ("capture", (0, 7), "thread_local") in log
    assert "get_graph_pool_state" in log

    # The next call starts a new generation, which frees this output's
    # block; keeping its storage keeps the block, as a graph pool would.
    block, ptr = recorded.untyped_storage(), recorded.data_ptr()
    del log[:]
    replayed = compiled(x, w)
    assert log.count("replay") == 1 and "Graph" not in log
    assert "free_graph_pool_block" in log
    assert replayed.device == torch.device(acc, 0)
    assert replayed.data_ptr() == ptr  # the recording's output memory
    torch.testing.assert_close(replayed.cpu(), want)  # the static inputs did not change
    with pytest.raises(RuntimeError, match="overwritten by a subsequent run"):
        recorded + 1
    del block
    assert skips() == 0


@needs_storage_helpers
def test_a_sibling_recording_restores_the_pool_state(acc: str, skips: Any) -> None:
    log: list[Any] = []
    register(capturing(log))
    x, w = _inputs(acc)
    first = torch.compile(lambda x, w: (x @ w).relu(), mode="reduce-overhead")
    second = torch.compile(lambda y: y.sin() * 2, mode="reduce-overhead")
    blocks = []
    for _ in range(3):  # warm up, record, replay
        y = first(x, w)
        blocks.append(y.untyped_storage())  # as a graph pool keeps the blocks
    torch.testing.assert_close(second(y).cpu(), ((x @ w).relu().sin() * 2).cpu())
    assert ("set_graph_pool_state", True, 1, 0) in log
    assert skips() == 0


@needs_storage_helpers
def test_a_training_step_records_forward_and_backward(acc: str, skips: Any) -> None:
    log: list[Any] = []
    register(capturing(log))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    reference = [p.detach().clone() for p in model.parameters()]
    model = model.to(acc)
    x = torch.randn(8, 16).to(acc)
    torch._dynamo.mark_static_address(x)
    compiled = torch.compile(model, mode="reduce-overhead")

    for _ in range(2):  # warm up, record (replaying a backward would copy into freed host memory)
        torch.compiler.cudagraph_mark_step_begin()
        model.zero_grad()
        compiled(x).square().sum().backward()
    cpu = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        for p, r in zip(cpu.parameters(), reference, strict=True):
            p.copy_(r)
    cpu(x.cpu()).square().sum().backward()
    for got, want in zip(model.parameters(), cpu.parameters(), strict=True):
        torch.testing.assert_close(got.grad.cpu(), want.grad, atol=1e-5, rtol=1e-5)
    assert log.count("Graph") == 3  # the manager's, the forward's and the backward's
    assert skips() == 0


def test_the_dynamo_cudagraphs_backend_records_on_acc(acc: str, skips: Any) -> None:
    log: list[Any] = []
    register(capturing(log))
    x, w = _inputs(acc)
    compiled = torch.compile(_layer, backend="cudagraphs")
    for _ in range(2):
        torch.testing.assert_close(compiled(x, w).cpu(), _layer(x, w).cpu())
    assert ("capture", (0, 7), "thread_local") in log
    assert skips() == 0
