"""Zero behaviour change for built-in devices: the stacked overlay against
stock torch, each side computed in a fresh interpreter."""

from __future__ import annotations

from pathlib import Path

from rfc_shared.testing.helpers import last_json, run_python


# For the model corpus on cpu: Dynamo's FX graphs, Inductor's generated code,
# and a digest of the results' bytes.
CORPUS_ON_CPU = """
import hashlib, json, torch
from torch._inductor.utils import run_and_get_code
from rfc_shared.testing.corpus import CORPUS

torch.manual_seed(0)
report = {}
for case in CORPUS:
    if case.name == "second_device":
        continue  # needs a second device; cpu has one
    graphs = []
    def backend(gm, example_inputs):
        graphs.append(gm.code)
        from torch._inductor.compile_fx import compile_fx
        return compile_fx(gm, example_inputs)
    torch._dynamo.reset()
    model = case.build()
    compiled = torch.compile(model, backend=backend, dynamic=case.dynamic or None)
    digests, codes = [], []
    for args in case.inputs():
        out, code = run_and_get_code(compiled, *args)
        outs = out if isinstance(out, (tuple, list)) else [out]
        digests += [hashlib.sha256(t.detach().contiguous().numpy().tobytes()).hexdigest()
                    for t in outs]
        codes += code
    report[case.name] = {"fx": graphs, "inductor": codes, "results": digests}
print(json.dumps(report))
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


def _both(code: str, tmp_path: Path, **env: str) -> tuple[object, object]:
    sides = []
    for slices in ("none", "all"):
        cache = str(tmp_path / slices)
        done = run_python(code, slices=slices, env={"TORCHINDUCTOR_CACHE_DIR": cache, **env})
        sides.append(last_json(done))
    return sides[0], sides[1]


def test_identity_and_capability_answers_for_builtin_devices_are_stock(tmp_path: Path) -> None:
    # No out-of-tree backend on either side: rfc3's entry-point discovery
    # honours the autoload switch, so acc is not loaded into the stacked side.
    stock, stacked = _both(IDENTITY, tmp_path, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert stacked == stock


def test_corpus_on_cpu_graphs_code_and_results_are_stock(tmp_path: Path) -> None:
    stock, stacked = _both(CORPUS_ON_CPU, tmp_path)
    assert stacked.keys() == stock.keys() and len(stock) >= 5
    for case in stock:
        for part in ("fx", "inductor", "results"):
            assert stacked[case][part] == stock[case][part], (case, part)
