"""Compiles the four cases on one example backend: ``python check.py minimal_host``."""

import importlib
import sys

import torch
import torch.nn.functional as F


backend = importlib.import_module(sys.argv[1])
name = torch._C._get_privateuse1_backend_name()
torch.manual_seed(0)


def close(out, expected) -> bool:
    return torch.allclose(out.cpu(), expected, atol=1e-5)


# 1. Pointwise.
x, y = torch.randn(64), torch.randn(64)
f = torch.compile(lambda x, y: (x + y).sin() * x)
print("pointwise", close(f(x.to(name), y.to(name)), (x + y).sin() * x))

# 2. An MLP, forward and backward, and a compiled SGD step.
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
reference = [p.detach().clone() for p in model.parameters()]
model.to(name)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
inputs, target = torch.randn(32, 8), torch.randn(32, 1)


@torch.compile
def step(inputs, target):
    loss = F.mse_loss(model(inputs), target)
    loss.backward()
    return loss


for _ in range(3):
    step(inputs.to(name), target.to(name))
    torch.compile(opt.step)()
    opt.zero_grad()
# The same three steps in eager mode on the CPU.
cpu = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
with torch.no_grad():
    for p, r in zip(cpu.parameters(), reference, strict=True):
        p.copy_(r)
cpu_opt = torch.optim.SGD(cpu.parameters(), lr=0.1)
for _ in range(3):
    F.mse_loss(cpu(inputs), target).backward()
    cpu_opt.step()
    cpu_opt.zero_grad()
print(
    "mlp",
    all(close(p, q.detach()) for p, q in zip(model.parameters(), cpu.parameters(), strict=True)),
)

# 3. Softmax.
x = torch.randn(4, 32)
print("softmax", close(torch.compile(lambda t: t.softmax(-1))(x.to(name)), x.softmax(-1)))

# 4. A second device.
out = torch.compile(lambda t: t.cos() + 1)(x.to(f"{name}:1"))
print("second device", out.device, close(out, x.cos() + 1))
