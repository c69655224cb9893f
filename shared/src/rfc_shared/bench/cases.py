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


def _per_call(setup: str, statement: str, number: int = 200_000) -> str:
    return f"""
import timeit
{setup}
best = min(timeit.repeat({statement!r}, globals=globals(), number={number}, repeat=5))
print(best / {number})
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
GET_GPU_TYPE = _per_call(
    "import torch\nfrom torch._inductor.utils import get_gpu_type\nget_gpu_type()",
    "get_gpu_type()",
    number=1_000_000,
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
import statistics, time, torch
if {device!r} == "acc":
    import torch_acc
from rfc_shared.testing.corpus import CORPUS, device_for
torch.set_num_threads(1)
runs = []
for case in CORPUS:
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


STOCK = {"TORCH_RFC_SLICES": "none"}
STACKED = {"TORCH_RFC_SLICES": "all", "TRITON_INTERPRET": "1"}
# Compile times with every Inductor cache off: a warm cache would time a lookup.
_COLD = {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
STOCK_COLD = {**STOCK, **_COLD}
STACKED_COLD = {**STACKED, **_COLD}
# acc in host mode compiles to the same C++ kernels as cpu.
STACKED_HOST = {**STACKED, "TORCH_ACC_MODE": "host"}


def _lookup_case(name: str, what: str, code: str) -> Case:
    return Case(
        name,
        f"{what} per call, stacked overlay vs stock torch",
        Side("stacked", code, {"TORCH_RFC_SLICES": "all"}),
        Side("stock", code, STOCK),
        goal="<= 1.5",
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
        _lookup_case("is_gpu", "is_gpu() over six device names", IS_GPU),
        _lookup_case(
            "get_interface_for_device", "get_interface_for_device() over six names", GET_INTERFACE
        ),
        _lookup_case("get_gpu_type", "get_gpu_type()", GET_GPU_TYPE),
        Case(
            "backend_import",
            "import torch, torch_acc: the interface found lazily by convention (lazy_reg) vs "
            "registered eagerly through torch._dynamo at import",
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
    )
}
