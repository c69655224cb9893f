"""graph_capture changes nothing for built-in devices: stock torch against the
slice, each side in a fresh interpreter, with device-backend autoload on and
torch-acc installed but not imported (as tests/reliability/test_invariance.py
does for the stacked slices).

No GPU here: CUDA's side is what the tree manager calls, through torch.cuda
and the torch._C allocator bindings replaced by recorders before Dynamo is
imported, and the eligibility decisions; CPU's is Inductor's generated code
and results under mode="reduce-overhead".
"""

from __future__ import annotations

import pytest
import torch

from rfc_shared.testing.helpers import stock_and_overlaid


# Not marked as a slice test: each side selects its own torch, so these pass
# whatever the parent process serves (the control session leaves them out).
AUTOLOAD_ON = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "1", "TORCH_RFC_BACKEND": None}


def _both(code: str) -> tuple[object, object]:
    return stock_and_overlaid(code, "graph_capture", AUTOLOAD_ON)


# The calls the tree manager makes on CUDA, recorded: torch.cuda's functions
# and classes and the torch._C bindings, replaced before anything imports
# Dynamo (CudaInterface binds torch.cuda's functions when it is defined).
CUDA_CALLS = """
import contextlib, json, sys, torch
assert "torch._dynamo" not in sys.modules
calls = []

def recorder(name, result=None):
    def record(*args, **kwargs):
        calls.append([name, [repr(a) for a in args], sorted(kwargs)])
        return result
    return record

class Stream:
    def __init__(self, *args, **kwargs):
        calls.append(["Stream", [], []])
    def wait_stream(self, other):
        calls.append(["wait_stream", [type(other).__name__], []])

class CUDAGraph:
    def __init__(self, *args, **kwargs):
        calls.append(["CUDAGraph", [], []])
    def replay(self):
        calls.append(["replay", [], []])

@contextlib.contextmanager
def context(name, *args, **kwargs):
    calls.append([name, [repr(a) for a in args if not isinstance(a, (Stream, CUDAGraph))],
                  sorted(kwargs)])
    yield
    calls.append([name + " exit", [], []])

torch.cuda.synchronize = recorder("synchronize")
torch.cuda.current_stream = lambda *a: Stream.__new__(Stream)
torch.cuda.Stream = Stream
torch.cuda.CUDAGraph = CUDAGraph
torch.cuda.graph = lambda *a, **k: context("graph", *a, **k)
torch.cuda.stream = lambda *a, **k: context("stream", *a, **k)
torch.cuda.device = lambda *a, **k: context("device", *a, **k)
torch.cuda.graph_pool_handle = recorder("graph_pool_handle", (0, 1))
torch.cuda.memory_snapshot = recorder("memory_snapshot", [])
for name in ["_cuda_beginAllocateCurrentThreadToPool", "_cuda_endAllocateToPool",
             "_cuda_releasePool", "_cuda_setCheckpointPoolState",
             "_cuda_cudaCachingAllocator_raw_delete", "_cuda_clearCublasWorkspaces",
             "_cudnn_set_conv_benchmark_empty_cache"]:
    setattr(torch._C, name, recorder(name))
torch._C._cuda_checkPoolLiveAllocations = recorder("_cuda_checkPoolLiveAllocations", False)
torch._C._cuda_getCheckpointState = recorder("_cuda_getCheckpointState", "state")
torch._C._cuda_get_conv_benchmark_empty_cache = recorder("_get_conv_benchmark", True)

from torch._inductor import cudagraph_trees as trees

report = {}
manager = trees.CUDAGraphTreeManager(0)
report["manager"], calls[:] = list(calls), []
with trees._use_cuda_memory_pool_manager(0, (0, 1), manager.stream):
    calls.append(["body", [], []])
report["pool"], calls[:] = list(calls), []

# A warmup and a recording of a function without tensors: every context they
# enter, in order; then the allocator checkpoint restored.
from torch._inductor.cudagraph_utils import FunctionID, WrappedFunction

def model(inputs):
    calls.append(["model", [], []])
    return []

import dataclasses, inspect
values = dict(model=model, static_input_idxs=[], id=FunctionID(0), constants=(), placeholders=(),
              mutated_input_idxs=(), cudagraph_managed_input_rerecord_limit=1,
              cudagraph_managed_input_rerecord_action="copy")
# The fields of the torch in use (2.13 has fewer).
wrapped = WrappedFunction(**{f.name: values[f.name] for f in dataclasses.fields(WrappedFunction)
                             if f.name in values})
warmup = trees.CUDAWarmupNode(wrapped, None, (0, 1), None, 0, [], manager.stream, False,
                              trees.GraphID(-1))
warmup.run([])
report["warmup"], calls[:] = list(calls), []
extra = {}
if "liveness_check_state" in inspect.signature(trees.CUDAGraphNode).parameters:
    extra["liveness_check_state"] = manager.liveness_check_state
node = trees.CUDAGraphNode(wrapped, trees.GraphID(0), None, [], (0, 1), 0, [], manager.stream,
                           trees.CompilationMode.INFERENCE, None, **extra)
report["record"], calls[:] = list(calls), []
manager.current_node = node
manager.apply_checkpoint_execution_state_in_allocator()
report["restore"] = list(calls)
print(json.dumps(report))
"""


@pytest.mark.skipif(
    not torch.backends.cuda.is_built(), reason="stock graph trees need a torch built with CUDA"
)
def test_the_tree_manager_makes_the_same_cuda_calls() -> None:
    stock, sliced = _both(CUDA_CALLS)
    assert sliced == stock
    assert ["graph_pool_handle", [], []] in stock["manager"]


# Whether a graph on built-in devices is recorded, and why not.
DECISIONS = """
import json, torch
from torch._inductor.cudagraph_utils import check_multiple_devices_or_any_cpu_nodes

def node(name):
    return torch.fx.Graph().placeholder(name)

mappings = {
    "cuda": ["cuda:0"], "cuda1": ["cuda:1"], "cpu": ["cpu"], "two_cuda": ["cuda:0", "cuda:1"],
    "cuda_cpu": ["cuda:0", "cpu"], "meta": ["meta"], "cuda_meta": ["cuda:0", "meta"],
    "none": [], "xpu": ["xpu:0"], "mps": ["mps"], "mtia": ["mtia:0"],
    "cuda_xpu": ["cuda:0", "xpu:0"],
}
out = {}
for name, devices in mappings.items():
    reason = check_multiple_devices_or_any_cpu_nodes(
        {torch.device(d): node(f"arg{i}") for i, d in enumerate(devices)})
    out[name] = reason
print(json.dumps(out))
"""


def test_eligibility_decisions_for_builtin_devices_are_stock() -> None:
    # The decisions and their messages: XPU, MPS and MTIA, which do not
    # declare graph capture, keep "multiple devices: <one device>".
    stock, sliced = _both(DECISIONS)
    assert sliced == stock


# mode="reduce-overhead" on cpu: Inductor's code, what it counted and the results.
# Graph capture is decided per graph, by its device and what it does: a model,
# in-place updates of views, dynamic shapes, and a training step (backward and
# optimizer, whose parameters are mutated).
REDUCE_OVERHEAD_CASES = ("mlp", "inplace_views", "dynamic_shape", "transformer_train_step")
REDUCE_OVERHEAD_ON_CPU = f"""
import json, torch
from torch._dynamo.utils import counters
from torch._inductor.utils import run_and_get_code
from rfc_shared.conformance.corpus import CASES, digests as corpus_digests

report = {{}}
for case in (CASES[name] for name in {REDUCE_OVERHEAD_CASES!r}):
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(case.build(), mode="reduce-overhead", dynamic=case.dynamic or None)
    codes, digests = [], []
    for args in case.inputs():
        out, code = run_and_get_code(compiled, *args)
        digests += corpus_digests(out)
        codes += code
    report[case.name] = {{"inductor": codes, "results": digests,
                         "counters": dict(counters["inductor"])}}
print(json.dumps(report))
"""


def test_reduce_overhead_on_cpu_is_stock() -> None:
    stock, sliced = _both(REDUCE_OVERHEAD_ON_CPU)
    assert sliced.keys() == stock.keys() == set(REDUCE_OVERHEAD_CASES)
    for case in stock:
        assert sliced[case] == stock[case], case
