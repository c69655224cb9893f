"""AOTInductor packages on acc (slice aoti): torch.export, then
aoti_compile_and_package, then aoti_load_package and a run, equal to eager.

Host mode (C++ kernels, acc memory is host memory) in CI; over CUDA memory
(Triton kernels compiled to cubins) where tools/gpu_run.sh runs this file. acc
registers its model runner with libtorch (RegisterAOTIModelRunner,
csrc/aoti_runner.cpp), and the slice gives the generated model acc's device.
Each case runs in a fresh interpreter, since acc's mode is read once at import.
"""

from __future__ import annotations

import json

import pytest

from rfc_shared.testing.helpers import last_json, run_python


torch_acc = pytest.importorskip("torch_acc")

PACKAGES = """
import json, os, tempfile, zipfile
import torch
import torch_acc

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))

class PointwiseSoftmax(torch.nn.Module):
    def forward(self, x, y):
        return torch.softmax(torch.sin(x) * y + 1, dim=-1)

# An ATen fallback acc declares no C shim for: the proxy executor calls it.
class TopK(torch.nn.Module):
    def forward(self, x):
        values, indices = torch.topk(x, 3)
        return values * 2 + indices

torch.manual_seed(0)
report = {}
with tempfile.TemporaryDirectory() as folder:
    for name, make, shapes in (
        ("mlp", MLP, [(4, 16)]),
        ("pointwise_softmax", PointwiseSoftmax, [(4, 8), (4, 8)]),
        ("topk", TopK, [(4, 8)]),
    ):
        model = make().to("acc").eval()
        args = tuple(torch.randn(*s, device="acc") for s in shapes)
        path = torch._inductor.aoti_compile_and_package(
            torch.export.export(model, args), package_path=os.path.join(folder, name + ".pt2")
        )
        with zipfile.ZipFile(path) as archive:
            source = "".join(
                archive.read(n).decode() for n in archive.namelist() if n.endswith("wrapper.cpp")
            )
        runs = {"proxy_executor": "aoti_torch_proxy_executor_call_function" in source}
        for index in range(min(2, torch.acc.device_count())):
            on = torch.device("acc", index)
            loaded = torch._inductor.aoti_load_package(path, device_index=index)
            moved = model.to(on)
            inputs = tuple(a.to(on) for a in args)
            got = loaded(*inputs)
            want = moved(*inputs)
            runs[str(index)] = {
                "device": str(got.device),
                "equal": bool(torch.allclose(got.cpu(), want.cpu(), atol=1e-5, rtol=1e-5)),
            }
        report[name] = runs
print(json.dumps(report))
"""


# Over CUDA memory only where tools/gpu_run.sh runs it: CUDA usable and acc
# built with its CUDA extension.
CUDA = pytest.param(
    "cuda",
    marks=pytest.mark.skipif(
        not torch_acc._mode._cuda_usable(), reason="acc over CUDA memory needs CUDA"
    ),
)


@pytest.mark.slice("aoti")
@pytest.mark.parametrize("mode", ["host", CUDA])
def test_aoti_packages_build_load_and_run_on_acc_like_eager(mode: str) -> None:
    done = run_python(PACKAGES, env={"TORCH_ACC_MODE": mode, "TRITON_INTERPRET": None})
    report = last_json(done)
    # Host mode has two acc devices; over CUDA memory, one per GPU (two at most).
    indices = ["0", "1"] if mode == "host" else [k for k in report["mlp"] if k.isdigit()]
    assert indices, json.dumps(report)
    want = {i: {"device": f"acc:{i}", "equal": True} for i in indices}
    assert report == {
        "mlp": {**want, "proxy_executor": False},
        "pointwise_softmax": {**want, "proxy_executor": False},
        "topk": {**want, "proxy_executor": True},
    }, json.dumps(report)
