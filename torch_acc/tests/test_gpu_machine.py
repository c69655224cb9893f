"""On a machine with CUDA: importing torch_acc leaves CUDA alone unless acc
over CUDA is asked for, and acc over CUDA works as the first device a process
uses. Skipped without CUDA (CI); run by tools/gpu_run.sh."""

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


def test_importing_torch_acc_leaves_cuda_training_working() -> None:
    done = run_python(CUDA_TRAINING, env={"TORCH_ACC_MODE": None})
    mode, accelerator, trained = last_json(done)
    # acc unused: its PrivateUse1 hooks are not registered, CUDA is the accelerator
    assert [mode, accelerator, trained] == ["gpu", "cuda", True]


def test_acc_over_host_memory_becomes_the_accelerator_at_its_first_use() -> None:
    done = run_python(
        """
        import json, torch, torch_acc
        before = str(torch.accelerator.current_accelerator())
        x = torch.ones(4, device="acc") + 1
        print(json.dumps([before, str(torch.accelerator.current_accelerator()), x.sum().item()]))
        """,
        env={"TORCH_ACC_MODE": None},
    )
    assert last_json(done) == ["cuda", "acc", 8.0]


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
