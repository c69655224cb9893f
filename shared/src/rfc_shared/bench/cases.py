"""The benchmark cases. Each side is a snippet that prints one number: the
seconds one unit of work took, as the case defines the unit."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Side:
    label: str
    code: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    a: Side
    b: Side
    # How the ratio should compare ("<= 1.5"), or A's median in seconds
    # ("A < 0.010"); "report" for no goal.
    goal: str
    unit: str = "s"
    # "time": the ratio is median(A) / median(B), lower is better for A.
    # "speed": median(B) / median(A), A's speed relative to B's.
    ratio: str = "time"


# Set by ``--smoke``: each side runs once on the least work that exercises its
# code (one corpus case, few calls), to show that the case still runs.
SMOKE = "RFC_BENCH_SMOKE"
# What ``--smoke`` sets over each side's environment: its figures mean nothing,
# so no side compiles cold. Every side shares one Inductor cache directory with
# the FX graph and AOTAutograd caches off (as the tests' stock-vs-overlaid
# runs do): each side traces and lowers, and reuses only the C++ kernels and
# wrapper modules compiled from identical source text.
SMOKE_CACHES = {
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "0",
    "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
}


def _per_call(setup: str, statement: str, number: int = 200_000) -> str:
    return f"""
import os, timeit
{setup}
number = 10 if os.environ.get({SMOKE!r}) else {number}
best = min(timeit.repeat({statement!r}, globals=globals(), number=number, repeat=5))
print(best / number)
"""


IS_GPU = _per_call(
    "import torch\nfrom torch._inductor.utils import is_gpu\n"
    "names = ('cuda', 'cpu', 'mps', 'xpu', 'meta', None)\n"
    "[is_gpu(n) for n in names]",
    "for n in names: is_gpu(n)",
)
GET_INTERFACE = _per_call(
    "import torch\nfrom torch._dynamo.device_interface import get_interface_for_device\n"
    "names = ('cuda', 'cpu', 'mps', 'xpu', 'mtia', 'tpu')\n"
    "[get_interface_for_device(n) for n in names]",
    "for n in names: get_interface_for_device(n)",
)
# The registered interfaces, as Dynamo asks for them: wrap_fx_proxy_cls asks
# up to three times for each non-tensor value it wraps.
GET_REGISTERED = _per_call(
    "import torch\n"
    "from torch._dynamo.device_interface import get_registered_device_interfaces\n"
    "get_registered_device_interfaces()",
    "get_registered_device_interfaces()",
    number=1_000_000,
)
# The same after PrivateUse1 was renamed, before its backend registered an
# interface: the state of a vendor's process between its import and its
# registration (lazy_reg looks for the backend's interface then).
GET_REGISTERED_RENAMED = _per_call(
    "import torch\n"
    "from torch._dynamo.device_interface import get_registered_device_interfaces\n"
    "torch.utils.rename_privateuse1_backend('foo')\n"
    "get_registered_device_interfaces()",
    "get_registered_device_interfaces()",
    number=1_000_000,
)
# Dynamo wrapping a non-tensor FX value, the step that asks for the registered
# interfaces three times (the stream, event and event-class checks) before it
# reaches its branch: an int produced by operator.mod, wrapped as a constant.
WRAP_NON_TENSOR = _per_call(
    "import operator, torch\n"
    "from torch._dynamo.variables import TensorVariable\n"
    "from torch._dynamo.variables.builder import wrap_fx_proxy_cls\n"
    "from torch._guards import TracingContext, tracing\n"
    "from torch._subclasses.fake_tensor import FakeTensorMode\n"
    "trace = tracing(TracingContext(FakeTensorMode()))\n"
    "trace.__enter__()\n"
    "graph = torch.fx.Graph()\n"
    "proxy = torch.fx.Proxy(graph.call_function(operator.mod, (7, 4)))\n"
    "wrap_fx_proxy_cls(TensorVariable, None, proxy, example_value=3)",
    "wrap_fx_proxy_cls(TensorVariable, None, proxy, example_value=3)",
    number=50_000,
)
# What the four fusion sites of rfc3 ask of a node on a GPU device:
# uses_cpp_kernels() where the follow-up is applied, is_cpu() on stock torch.
FUSION_CHECK = _per_call(
    "import torch\n"
    "from torch._inductor.codegen.common import init_backend_registration\n"
    "from torch._inductor.scheduler import BaseSchedulerNode\n"
    "init_backend_registration()\n"
    "class Node(BaseSchedulerNode):\n"
    "    def __init__(self): pass\n"
    "    def get_device(self): return torch.device('cuda', 0)\n"
    "node = Node()\n"
    "check = getattr(node, 'uses_cpp_kernels', node.is_cpu)\n"
    "check()",
    "check()",
)
GET_GPU_TYPE = _per_call(
    "import torch\nfrom torch._inductor.utils import get_gpu_type\nget_gpu_type()",
    "get_gpu_type()",
    number=1_000_000,
)

# Dynamo's trace-rule lookup (trace_rules.lookup -> _lookup_inner) over the
# callables a trace meets: torch functions and tensor methods, builtins, the
# user's functions and methods, and library functions Dynamo skips. rfc2 adds
# the out-of-tree devices' rules to this path.
LOOKUP_INNER = _per_call(
    "import json, os.path, torch\n"
    "import torch.nn.functional as F\n"
    "from torch._dynamo import trace_rules\n"
    "def user_fn(x):\n    return x + 1\n"
    "class Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    "fns = (torch.add, torch.matmul, F.relu, torch.cuda.current_device,\n"
    "       torch.Tensor.add, len, isinstance, getattr, print, user_fn,\n"
    "       lambda x: x, Model.forward, Model().forward, json.dumps, os.path.join)\n"
    "[trace_rules.lookup(f) for f in fns]",
    "for f in fns: trace_rules.lookup(f)",
    number=20_000,
)


def _import_time(statements: str) -> str:
    return f"""
import time
start = time.perf_counter()
{statements}
print(time.perf_counter() - start)
"""


LAZY_IMPORT = _import_time("import torch, torch_acc")
EAGER_IMPORT = _import_time(
    "import torch, torch_acc\n"
    "from torch_acc.registration import register_device_interface\n"
    "register_device_interface()"
)
TORCH_IMPORT = _import_time("import torch")
# What importing the backend adds, timed inside one interpreter: the time of
# `import torch` itself varies by tens of milliseconds between runs.
ACC_AFTER_TORCH = """
import time
import torch
start = time.perf_counter()
import torch_acc
print(time.perf_counter() - start)
"""
INDUCTOR_IMPORT = _import_time("import torch._inductor.compile_fx")


def _corpus_timing(device: str, measure: str, compiled: bool = True) -> str:
    """Seconds to compile the whole corpus (first call of each case), or to
    run it once compiled (median of 5 passes after a warm-up)."""
    return f"""
import os, statistics, time, torch
if {device!r} == "acc":
    import torch_acc
from rfc_shared.conformance.corpus import CORPUS, device_for
torch.set_num_threads(1)
runs = []
for case in CORPUS[:1] if os.environ.get({SMOKE!r}) else CORPUS:
    device = device_for(case, {device!r})
    model = case.build()
    if isinstance(model, torch.nn.Module):
        model = model.to(device)
    if {compiled!r}:
        model = torch.compile(model, dynamic=case.dynamic or None)
    inputs = [tuple(t.to(device) for t in args) for args in case.inputs()]
    runs.append((model, inputs))
def one_pass():
    for model, inputs in runs:
        for args in inputs:
            model(*args)
start = time.perf_counter()
one_pass()
first = time.perf_counter() - start
if {measure!r} == "compile":
    print(first)
else:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        one_pass()
        times.append(time.perf_counter() - start)
    print(statistics.median(times))
"""


# Compile time of a small softmax function on cpu, where Inductor's
# online-softmax pattern matches and prepare_softmax_extra_check() is asked
# (backend_feature asks the DeviceInterface, stock a list of names). The
# median of 5 compiles after a first one that pays for imports and set-up.
SOFTMAX_COMPILE = f"""
import os, statistics, time, torch
torch.set_num_threads(1)
def fn(x):
    return torch.softmax(x, dim=-1) * 2
x = torch.randn(8, 64)
def compile_once():
    torch._dynamo.reset()
    start = time.perf_counter()
    torch.compile(fn)(x)
    return time.perf_counter() - start
compile_once()
print(statistics.median(compile_once() for _ in range(1 if os.environ.get({SMOKE!r}) else 5)))
"""


def _package_or_compiled(kind: str) -> str:
    """Seconds per call of an MLP with a softmax on acc, run from an
    AOTInductor package (``kind`` "aoti": export, package, load) or compiled
    by torch.compile ("compile"); the median of 5 repeats after a warm-up."""
    return f"""
import os, statistics, tempfile, time, torch, torch_acc
torch.set_num_threads(1)
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256), torch.nn.Softmax(-1)
).to("acc").eval()
x = torch.randn(64, 256, device="acc")
if {kind!r} == "aoti":
    folder = tempfile.mkdtemp()
    path = torch._inductor.aoti_compile_and_package(
        torch.export.export(model, (x,)), package_path=os.path.join(folder, "mlp.pt2")
    )
    fn = torch._inductor.aoti_load_package(path)
else:
    fn = torch.compile(model)
number = 2 if os.environ.get({SMOKE!r}) else 200
times = []
with torch.no_grad():
    fn(x)
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            fn(x)
        times.append((time.perf_counter() - start) / number)
print(statistics.median(times))
"""


STOCK = {"TORCH_RFC_SLICES": "none"}
STACKED = {"TORCH_RFC_SLICES": "all", "TRITON_INTERPRET": "1"}
# Compile times with every Inductor cache off: a warm cache would time a lookup.
_COLD = {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
STOCK_COLD = {**STOCK, **_COLD}
STACKED_COLD = {**STACKED, **_COLD}
# acc in host mode compiles to the same C++ kernels as cpu.
STACKED_HOST = {**STACKED, "TORCH_ACC_MODE": "host"}


def _lookup_case(name: str, what: str, code: str, goal: str = "<= 1.5") -> Case:
    return Case(
        name,
        f"{what} per call, stacked overlay vs stock torch",
        Side("stacked", code, {"TORCH_RFC_SLICES": "all"}),
        Side("stock", code, STOCK),
        goal=goal,
    )


CASES: dict[str, Case] = {
    case.name: case
    for case in (
        Case(
            "overlay_import",
            "import torch._inductor.compile_fx in a fresh interpreter: every module the "
            "slices patch served by the overlay (stacked) vs stock torch",
            Side("stacked", INDUCTOR_IMPORT, {"TORCH_RFC_SLICES": "all"}),
            Side("stock", INDUCTOR_IMPORT, STOCK),
            goal="<= 1.10",
        ),
        Case(
            "corpus_compile_cpu",
            "compile time of the corpus on cpu (first call of every case, caches off, one "
            "thread): stacked overlay vs stock torch",
            Side("stacked", _corpus_timing("cpu", "compile"), STACKED_COLD),
            Side("stock", _corpus_timing("cpu", "compile"), STOCK_COLD),
            goal="<= 1.02",
        ),
        _lookup_case("is_gpu", "is_gpu() over six device names", IS_GPU, goal="<= 1.1"),
        _lookup_case(
            "get_interface_for_device",
            "get_interface_for_device() over six names",
            GET_INTERFACE,
            goal="<= 1.1",
        ),
        _lookup_case(
            "get_registered_device_interfaces",
            "get_registered_device_interfaces()",
            GET_REGISTERED,
            goal="<= 1.1",
        ),
        _lookup_case(
            "get_registered_device_interfaces_renamed",
            "get_registered_device_interfaces() after rename_privateuse1_backend('foo'), no "
            "interface registered: lazy_reg asks the backend's module for its hook on every "
            "call until the backend registers (a state a working backend leaves at its first "
            "compile), so this is reported, not held to the registered case's goal",
            GET_REGISTERED_RENAMED,
            goal="report",
        ),
        _lookup_case(
            "wrap_non_tensor",
            "Dynamo's wrap_fx_proxy_cls() on an int FX value (three registry walks)",
            WRAP_NON_TENSOR,
            goal="<= 1.1",
        ),
        # A cached answer: the stacked side must cost what a functools.cache hit does.
        _lookup_case("get_gpu_type", "get_gpu_type()", GET_GPU_TYPE, goal="<= 1.1"),
        _lookup_case(
            "fusion_device_check",
            "the device check at the fusion sites for a node on cuda (uses_cpp_kernels() "
            "stacked, is_cpu() stock)",
            FUSION_CHECK,
            goal="report",
        ),
        Case(
            "lookup_inner",
            "Dynamo's trace_rules.lookup() over 15 callables (torch functions, builtins, user "
            "functions, skipped library functions), no out-of-tree rule registered: rfc2 (the "
            "out-of-tree device rules on this path) vs stock torch",
            Side("rfc2", LOOKUP_INNER, {"TORCH_RFC_SLICES": "rfc2"}),
            Side("stock", LOOKUP_INNER, STOCK),
            # The added work is one truth test per lookup (~0.1% in one
            # process); between processes the medians move by a few percent.
            goal="<= 1.05",
        ),
        Case(
            "backend_import",
            "import torch, torch_acc: the interface found when first needed, through "
            "torch.acc.get_device_interface() (lazy_reg), vs registered eagerly through "
            "torch._dynamo at import",
            Side("lazy", LAZY_IMPORT, {"TORCH_RFC_SLICES": "lazy_reg"}),
            Side("eager", EAGER_IMPORT, {"TORCH_RFC_SLICES": "lazy_reg"}),
            goal="report",
        ),
        Case(
            "corpus_compile_acc_vs_cpu",
            "compile time of the corpus (first call of every case, caches off): acc in "
            "GPU-class mode vs cpu, both under the stacked overlay, one thread",
            Side("acc", _corpus_timing("acc", "compile"), STACKED_COLD),
            Side("cpu", _corpus_timing("cpu", "compile"), STACKED_COLD),
            goal="report",
        ),
        Case(
            "corpus_runtime_acc_vs_cpu",
            "one pass over the compiled corpus, stacked, one thread: acc in host mode vs cpu, "
            "the same C++ kernels on the same memory; the ratio is acc's speed relative to cpu",
            Side("acc", _corpus_timing("acc", "run"), STACKED_HOST),
            Side("cpu", _corpus_timing("cpu", "run"), STACKED),
            goal=">= 0.98",
            ratio="speed",
        ),
        Case(
            "corpus_runtime_acc_triton_vs_cpu",
            "one pass over the compiled corpus, stacked, one thread: acc in GPU-class mode "
            "(Triton kernels run by Triton's interpreter) vs cpu (C++ kernels)",
            Side("acc", _corpus_timing("acc", "run"), STACKED),
            Side("cpu", _corpus_timing("cpu", "run"), STACKED),
            goal="report",
        ),
        Case(
            "corpus_compiled_vs_eager_acc",
            "one pass over the corpus on acc: compiled vs eager, stacked, one thread",
            Side("compiled", _corpus_timing("acc", "run"), STACKED),
            Side("eager", _corpus_timing("acc", "run", compiled=False), STACKED),
            goal="report",
        ),
        Case(
            "backend_import_overhead",
            "what import torch_acc adds after import torch (lazy registration), vs import "
            "torch itself; the goal is on A's median",
            Side("torch_acc", ACC_AFTER_TORCH, {"TORCH_RFC_SLICES": "lazy_reg"}),
            Side("torch", TORCH_IMPORT, {"TORCH_RFC_SLICES": "lazy_reg"}),
            goal="A < 0.010",
        ),
        Case(
            "aoti_vs_compile_acc",
            "one call of an MLP with a softmax on acc in host mode, one thread: from an "
            "AOTInductor package (slice aoti) vs compiled by torch.compile, stacked",
            Side("aoti", _package_or_compiled("aoti"), STACKED_HOST),
            Side("compile", _package_or_compiled("compile"), STACKED_HOST),
            goal="report",
        ),
        Case(
            "softmax_pattern",
            "compile time of a small softmax function on cpu (caches off, one thread), where "
            "the online-softmax check runs: stacked overlay vs stock torch",
            Side("stacked", SOFTMAX_COMPILE, STACKED_COLD),
            Side("stock", SOFTMAX_COMPILE, STOCK_COLD),
            goal="<= 1.05",
        ),
    )
}
