"""On a machine with CUDA: torch-acc installed but not imported leaves CUDA
training alone; importing it makes acc the process's one accelerator
(PyTorch's rule, pinned here); acc over CUDA works as the first device a
process uses. Skipped without CUDA (CI); run by tools/gpu_run.sh."""

from __future__ import annotations

import pytest
import torch

from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

CUDA_TRAINING = """
import json, torch
import torch_acc  # without TORCH_ACC_MODE: acc stays off CUDA
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 1)).cuda()
opt = torch.optim.AdamW(model.parameters())
step = torch.compile(lambda x: model(x).square().mean())
for _ in range(3):
    loss = step(torch.randn(32, 64, device="cuda"))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(json.dumps([torch_acc.mode, str(torch.accelerator.current_accelerator()), loss.item() > 0]))
"""


def test_torch_acc_installed_but_not_imported_leaves_cuda_training_alone() -> None:
    script = CUDA_TRAINING.replace(
        "import torch_acc  # without TORCH_ACC_MODE: acc stays off CUDA\n", ""
    )
    script = script.replace("torch_acc.mode", "'torch_acc' in __import__('sys').modules")
    done = run_python(script, env={"TORCH_ACC_MODE": None})
    assert last_json(done) == [False, "cuda", True]


RENAMED_PRIVATEUSE1 = """
import json, torch
before = str(torch.accelerator.current_accelerator())
torch.utils.rename_privateuse1_backend("elsewhere")  # no hooks, no kernels, no allocator
print(json.dumps([before, str(torch.accelerator.current_accelerator())]))
"""


def test_any_renamed_privateuse1_backend_becomes_the_accelerator() -> None:
    # Why importing acc (or any PrivateUse1 backend) decides the process's one
    # accelerator: the rename alone does it, before any hook or tensor.
    assert last_json(run_python(RENAMED_PRIVATEUSE1)) == ["cuda", "elsewhere"]


@pytest.mark.xfail(
    strict=True,
    reason="upstream: a renamed PrivateUse1 backend is ATen's one accelerator, and the "
    "autograd engine then finds no stream for CUDA's nodes (opt_ready_stream && "
    "opt_parent_stream INTERNAL ASSERT); a process imports acc or trains on CUDA",
)
def test_importing_torch_acc_leaves_cuda_training_working() -> None:
    done = run_python(CUDA_TRAINING, env={"TORCH_ACC_MODE": None})
    assert last_json(done) == ["gpu", "cuda", True]


def test_an_acc_tensor_first_in_a_fresh_process_initializes_cuda() -> None:
    done = run_python(
        """
        import json, torch, torch_acc
        x = torch.ones(4, device="acc")  # before any CUDA tensor
        print(json.dumps([str(x.device), (x + 1).sum().item()]))
        """,
        env={"TORCH_ACC_MODE": "cuda"},
    )
    assert last_json(done) == ["acc:0", 8.0]
