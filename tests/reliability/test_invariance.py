"""Zero behaviour change for built-in devices: the stacked overlay against
stock torch, each side computed in a fresh interpreter."""

from __future__ import annotations

from importlib.metadata import version

from rfc_shared.testing.helpers import stock_and_overlaid


# For the model corpus on cpu (see corpus_report_on_cpu), in ``report``, which
# the script goes on to fill. It follows SNAPSHOT in one script.
# Forward and backward: floating inputs require grad.
CORPUS_ON_CPU = """
from rfc_shared.testing.helpers import corpus_report_on_cpu
report = corpus_report_on_cpu(backward=True)
"""

BUILTIN_NAMES = ["cpu", "cuda", "xpu", "mps", "mtia", "tpu", "meta", "hpu", "cuda:0", "xla"]

# Every identity/capability question a slice answers differently for a
# PrivateUse1 backend, asked of every built-in name; an exception is an answer.
IDENTITY = f"""
import json, torch
names = {BUILTIN_NAMES!r}

def ask(fn, *args):
    try:
        value = fn(*args)
    except Exception as e:
        if isinstance(e, KeyError) and type(e) is not KeyError:
            return f"raises {{type(e).__name__}} (a KeyError)"
        return f"raises {{type(e).__name__}}"
    if isinstance(value, type):
        return value.__qualname__
    if callable(value):
        return getattr(value, "__name__", type(value).__name__)
    if isinstance(value, (list, tuple, set, frozenset)):
        return sorted(map(str, value))
    return value if isinstance(value, (bool, int, float, str, type(None))) else str(value)

import torch._inductor.utils as u
from torch._dynamo.device_interface import get_interface_for_device
from torch._inductor import ir
from torch._inductor.codegen import common
from torch._inductor.codecache import get_kernel_bin_format
from torch._refs.fft import _promote_type_fft
from torch.optim.optimizer import _get_capturable_supported_devices
from torch.utils._triton import has_triton

common.init_backend_registration()
answers = {{
    "GPU_TYPES": sorted(u.GPU_TYPES),
    "get_gpu_type": ask(u.get_gpu_type),
    "has_triton": ask(has_triton),
    "capturable_devices": ask(_get_capturable_supported_devices),
}}
for name in names:
    kind = name.partition(":")[0]  # torch.device() rejects some names ("tpu")
    answers[name] = {{
        "is_gpu": ask(u.is_gpu, name),
        "device_need_guard": ask(u.device_need_guard, name),
        "interface": ask(get_interface_for_device, name),
        "scheduling": ask(common.get_scheduling_for_device, kind),
        "wrapper_codegen": ask(common.get_wrapper_codegen_for_device, kind),
        # A local subclass stands for its base: rfc3 gives tpu one only to
        # make its new aten_device_type() raise, as DEVICE_TO_ATEN had no tpu.
        "op_overrides": ask(lambda: next(
            c for c in type(common.get_device_op_overrides(kind)).__mro__
            if "<locals>" not in c.__qualname__)),
        "is_triton": ask(lambda: ir.is_triton(torch.device(name))),
        "kernel_bin_format": ask(get_kernel_bin_format, kind),
        "fp16_fft": ask(lambda: _promote_type_fft(torch.float16, False, torch.device(name))),
    }}
print(json.dumps(answers))
"""


def _both(code: str, **env: str | None) -> tuple[object, object]:
    return stock_and_overlaid(code, "all", env)


# Every test here runs as a user's program would: device-backend autoload on
# and the reference backend installed but not imported.
AUTOLOAD_ON = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "1", "TORCH_RFC_BACKEND": None}


def test_identity_and_capability_answers_for_builtin_devices_are_stock() -> None:
    stock, stacked = _both(IDENTITY, **AUTOLOAD_ON)
    # The one intended difference (registry core): an indexed name resolves
    # by its device type, as torch.device("cuda:0") does, where stock torch
    # raises for an index it did not register.
    if stock["cuda:0"]["interface"] == "raises NotImplementedError":
        assert stacked["cuda:0"]["interface"] == "CudaInterface"
        stacked["cuda:0"]["interface"] = stock["cuda:0"]["interface"]
    # And rfc3's: a device without an Inductor backend raises a KeyError that
    # says how to register (NoDeviceOpOverridesError; NoBackendForDeviceError in
    # the backports' older series), where stock's names the key.
    errors = ("NoDeviceOpOverridesError", "NoBackendForDeviceError")
    says_how = {f"raises {e} (a KeyError)" for e in errors}
    for name in BUILTIN_NAMES:
        if stacked[name]["op_overrides"] in says_how:
            assert stock[name]["op_overrides"] == "raises KeyError", name
            stacked[name]["op_overrides"] = stock[name]["op_overrides"]
    # On a backport base, rfc3's [backport] patch brings what upstream's 2.15
    # registers for tpu (no-op overrides; stock 2.13 and 2.11 lend the CPU's).
    release = tuple(int(part) for part in version("torch").split("+")[0].split(".")[:2])
    if release < (2, 15) and stock["tpu"]["op_overrides"] == "CpuDeviceOpOverrides":
        assert stacked["tpu"]["op_overrides"] == "NoOpDeviceOpOverrides"
        stacked["tpu"]["op_overrides"] = stock["tpu"]["op_overrides"]
    assert stacked == stock


# What the slices' registries hold, as plain data: taken before any compile
# and again after compiling the CPU corpus.
SNAPSHOT = """
import json, sys, torch

def snapshot():
    import torch._dynamo.trace_rules as trace_rules
    import torch._dynamo.utils as dynamo_utils
    import torch._inductor.utils as u
    from torch._dynamo.device_interface import get_registered_device_interfaces
    from torch._inductor.codegen import common

    constant_types = dynamo_utils.common_constant_types
    constant_types = constant_types() if callable(constant_types) else constant_types
    return {
        "interfaces": sorted(
            (name, iface.__qualname__) for name, iface in get_registered_device_interfaces()
        ),
        "gpu_types": sorted(u.GPU_TYPES),
        "inductor_backends": sorted(common.device_codegens),
        "op_overrides": sorted(common.device_op_overrides_dict),
        "constant_types": sorted(t.__qualname__ for t in constant_types),
        # Functions the slices add to torch for Dynamo to fold (backend_feature's
        # graph-capture question of the optimizer) have no stock counterpart.
        "torch_obj_rules": len([
            fn for fn in trace_rules.get_torch_obj_rule_map()
            if f"{getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', None)}"
            not in NEW_RULES
        ]),
        "privateuse1": torch._C._get_privateuse1_backend_name(),
        "accelerator": str(torch.accelerator.current_accelerator()),
        # The backend itself; Triton imports its plugin (torch_acc_triton)
        # whenever anything imports triton.backends, stock torch included.
        "backend_modules": sorted(
            m for m in sys.modules if m == "torch_acc" or m.startswith("torch_acc.")
        ),
    }

NEW_RULES = ("torch.optim.optimizer._device_captures_graphs",)
before = snapshot()
"""
# The registries before and after compiling the corpus for cpu, and the corpus'
# graphs, code and results: one compile of the corpus per side serves both.
CORPUS_AND_REGISTRIES = (
    SNAPSHOT
    + CORPUS_ON_CPU
    + """
print(json.dumps({"before": before, "after": snapshot(), "corpus": report}))
"""
)


def test_a_cpu_compile_of_the_corpus_is_stock() -> None:
    """With torch-acc installed and autoload on, compiling the corpus for cpu
    loads no backend, renames nothing and registers nothing a stock torch
    would not; Dynamo's graphs, Inductor's code (forward and backward) and the
    results are stock's."""
    stock, stacked = _both(CORPUS_AND_REGISTRIES, **AUTOLOAD_ON)
    assert stacked["before"] == stock["before"]
    assert stacked["after"] == stock["after"]
    assert stacked["after"]["backend_modules"] == []
    assert stacked["after"]["privateuse1"] == "privateuseone"
    stock, stacked = stock["corpus"], stacked["corpus"]
    assert stacked.keys() == stock.keys() and len(stock) >= 5
    for case in stock:
        assert len(stock[case]["inductor"]) >= 2, case  # forward and backward
        for part in ("fx", "inductor", "results"):
            assert stacked[case][part] == stock[case][part], (case, part)


# Compiled optimizers and backward graphs on cpu: Dynamo's graphs, Inductor's
# generated code and the results.
OPTIMIZERS_AND_BACKWARD = """
import json, torch
from torch._inductor.utils import run_and_get_code
from torch.optim.adam import adam
from rfc_shared.conformance.corpus import digests as digest

def capture(fn, *args, fullgraph=True):
    graphs = []
    def backend(gm, example_inputs):
        graphs.append(gm.code)
        from torch._inductor.compile_fx import compile_fx
        return compile_fx(gm, example_inputs)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
    out, code = run_and_get_code(compiled, *args)
    return {"fx": graphs, "inductor": code, "results": digest(out)}

torch.manual_seed(0)
report = {}

# Functional adam, as the optimizer's step calls it (capturable off, no foreach).
params = [torch.randn(8, 8) for _ in range(2)]
grads = [torch.randn(8, 8) for _ in range(2)]
exp_avgs = [torch.zeros(8, 8) for _ in range(2)]
exp_avg_sqs = [torch.zeros(8, 8) for _ in range(2)]
steps = [torch.tensor(0.0) for _ in range(2)]

def functional_adam(params, grads, exp_avgs, exp_avg_sqs, steps):
    adam(
        params, grads, exp_avgs, exp_avg_sqs, [], steps, foreach=False,
        capturable=False, differentiable=False, fused=None, grad_scale=None,
        found_inf=None, has_complex=False, amsgrad=False, beta1=0.9, beta2=0.999,
        lr=1e-3, weight_decay=0.0, eps=1e-8, maximize=False,
    )
    return params

report["functional_adam"] = capture(functional_adam, params, grads, exp_avgs, exp_avg_sqs, steps)

# torch.optim.Adam's step (it breaks the graph around the update by design).
model = torch.nn.Linear(8, 8)
for p in model.parameters():
    p.grad = torch.randn_like(p)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

def module_step():
    optimizer.step()
    return list(model.parameters())

report["module_adam"] = capture(module_step, fullgraph=False)

# A compiled forward whose backward Inductor compiles when it first runs.
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
x = torch.randn(4, 8, requires_grad=True)
graphs = []

def backend(gm, example_inputs):
    graphs.append(gm.code)
    from torch._inductor.compile_fx import compile_fx
    return compile_fx(gm, example_inputs)

torch._dynamo.reset()
forward = torch.compile(lambda x: net(x).square().mean(), backend=backend)

def train_step(x):
    loss = forward(x)
    loss.backward()
    return [loss, x.grad, *(p.grad for p in net.parameters())]

out, code = run_and_get_code(train_step, x)
assert len(code) == 2, "a forward and a backward kernel module"
report["backward"] = {"fx": graphs, "inductor": code, "results": digest(out)}
print(json.dumps(report))
"""


def test_compiled_optimizers_and_backward_graphs_on_cpu_are_stock() -> None:
    stock, stacked = _both(OPTIMIZERS_AND_BACKWARD, **AUTOLOAD_ON)
    assert stacked.keys() == stock.keys() == {"functional_adam", "module_adam", "backward"}
    for case in stock:
        for part in ("fx", "inductor", "results"):
            assert stacked[case][part] == stock[case][part], (case, part)


# Compiled autograd: Dynamo traces the backward as a graph of its own, which
# Inductor compiles through a wrapper module (flatten_graph_inputs' GmWrapper).
COMPILED_AUTOGRAD = """
import json, torch
from torch._dynamo.utils import counters
from rfc_shared.conformance.corpus import digests as digest

torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.ReLU(),
    torch.nn.Linear(16, 4),
)
x = torch.randn(4, 8)
# Read when the function is compiled, not when it runs.
torch._dynamo.config.compiled_autograd = True

@torch.compile
def step(x):
    loss = net(x).square().mean()
    loss.backward()
    return loss

losses = [step(x) for _ in range(2)]
report = {
    "results": digest([*losses, *(p.grad for p in net.parameters())]),
    "graph_breaks": sum(counters["graph_break"].values()),
    "compiled_autograd": dict(counters["compiled_autograd"]),
}
print(json.dumps(report))
"""


def test_compiled_autograd_on_cpu_is_stock() -> None:
    stock, stacked = _both(COMPILED_AUTOGRAD, **AUTOLOAD_ON)
    assert stacked == stock


# The other ways users compile on cpu, one script: each mode's results and
# Dynamo's counts (graphs, graph breaks, recompiles), or its error.
COMPILE_MODES = """
import json, os, tempfile, torch
import torch.distributed as dist
from torch._dynamo.utils import counters
from rfc_shared.conformance.corpus import digests as digest

report = {}

def mode(name, fn):
    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(0)
    try:
        out = fn()
    except Exception as e:
        report[name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
        return
    report[name] = {
        "results": digest(out),
        "graphs": counters["stats"]["unique_graphs"],
        "graph_breaks": sum(counters["graph_break"].values()),
        "recompiles": sum(counters["recompiles"].values()),
        "cudagraph_skips": counters["inductor"]["cudagraph_skips"],
    }

def mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)
    )

def export_and_aoti():
    model = mlp().eval()
    x = torch.randn(4, 8)
    exported = torch.export.export(model, (x,))
    with tempfile.TemporaryDirectory() as folder:
        path = torch._inductor.aoti_compile_and_package(
            exported, package_path=os.path.join(folder, "mlp.pt2")
        )
        return torch._inductor.aoti_load_package(path)(x)

def reduce_overhead():
    model = mlp()
    compiled = torch.compile(model, mode="reduce-overhead")
    return [compiled(torch.randn(4, 8)) for _ in range(3)]

def max_autotune():
    compiled = torch.compile(
        lambda a, b: (a @ b).relu(), mode="max-autotune-no-cudagraphs"
    )
    return compiled(torch.randn(32, 32), torch.randn(32, 32))

def dynamic_shapes():
    compiled = torch.compile(lambda x: (x * 2).softmax(-1), dynamic=True)
    return [compiled(torch.randn(n, 8)) for n in (3, 5, 7)] + [compiled(torch.randn(3, 9))]

def ddp_optimizer():
    with tempfile.TemporaryDirectory() as folder:
        dist.init_process_group(
            "gloo", init_method=f"file://{folder}/rendezvous", rank=0, world_size=1
        )
        try:
            # Three 1 MB layers in 1 MB buckets: DDPOptimizer splits the graph.
            layers = [torch.nn.Linear(512, 512) for _ in range(3)]
            model = torch.nn.parallel.DistributedDataParallel(
                torch.nn.Sequential(*layers), bucket_cap_mb=1
            )
            compiled = torch.compile(model)
            out = compiled(torch.randn(4, 512))
            out.sum().backward()
            return [out, *(p.grad for p in model.parameters())]
        finally:
            dist.destroy_process_group()

def cond():
    def fn(x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))
    compiled = torch.compile(fn, fullgraph=True)
    return [compiled(torch.randn(4)), compiled(-torch.ones(4))]

for name, fn in (
    ("export_and_aoti", export_and_aoti),
    ("reduce_overhead", reduce_overhead),
    ("max_autotune", max_autotune),
    ("dynamic_shapes", dynamic_shapes),
    ("ddp_optimizer", ddp_optimizer),
    ("cond", cond),
):
    mode(name, fn)
print(json.dumps(report))
"""


def test_every_compile_mode_on_cpu_is_stock() -> None:
    stock, stacked = _both(COMPILE_MODES, **AUTOLOAD_ON)
    # Each mode ran on stock torch (a mode that stock cannot run is not a test).
    assert not [name for name, r in stock.items() if "error" in r], stock
    assert stacked == stock


# The C++ an AOTInductor package of cpu modules holds: its wrapper (the model's
# constructor, constants, ATen fallbacks through C shims) and its kernels.
AOTI_SOURCES = """
import json, os, tempfile, zipfile
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        values, indices = torch.topk(self.l2(torch.relu(self.l1(x))), 3)
        return torch.softmax(values, dim=-1) + indices

torch.manual_seed(0)
model, x = Net().eval(), torch.randn(4, 16)
with tempfile.TemporaryDirectory() as folder:
    path = torch._inductor.aoti_compile_and_package(
        torch.export.export(model, (x,)), package_path=os.path.join(folder, "net.pt2")
    )
    with zipfile.ZipFile(path) as archive:
        # Without the build commands appended to each source: both sides share
        # one cache directory, and a source compiled again gains them again.
        sources = sorted(
            archive.read(n).decode().split("\\n// Compile cmd")[0]
            for n in archive.namelist()
            if n.endswith(".cpp")
        )
    out = torch._inductor.aoti_load_package(path)(x)
print(json.dumps({"sources": sources, "equal": bool(torch.allclose(out, model(x)))}))
"""


def test_an_aoti_package_of_cpu_modules_is_stock() -> None:
    """The generated C++ of a cpu package is byte for byte stock's (slice aoti
    changes the model constructor and the C-shim decision for the PrivateUse1
    device only)."""
    stock, stacked = _both(AOTI_SOURCES, **AUTOLOAD_ON)
    assert stock["equal"] and len(stock["sources"]) == 2
    assert stacked == stock
