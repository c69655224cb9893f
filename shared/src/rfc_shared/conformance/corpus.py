"""The model corpus every slice is tested with: small, because acc's Triton
kernels run in Triton's interpreter when there is no GPU.

Each case builds a fresh, seeded model and inputs on the CPU; :func:`run`
places them on a device and runs them eagerly or compiled. A case with a
mode compiles in that mode.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class Case:
    """One corpus entry.

    Args:
        name: Short identifier, used in test ids and tables.
        build: Returns a fresh module or function.
        inputs: Input sets (CPU tensors); the compiled function is called
            once per set, in order (several sets exercise dynamic shapes).
        dynamic: Compile with ``dynamic=True``.
        device_index: The device index the case runs on.
        mode: The ``torch.compile`` mode the case compiles in with Inductor.
    """

    name: str
    build: Callable[[], Callable[..., Any]]
    inputs: Callable[[], Sequence[tuple[torch.Tensor, ...]]]
    dynamic: bool = False
    device_index: int = 0
    tolerance: float = field(default=1e-4, compare=False)
    mode: str | None = None


def _seeded(fn: Callable[[], Any]) -> Callable[[], Any]:
    def build() -> Any:
        torch.manual_seed(0)
        return fn()

    return build


class AttentionBlock(nn.Module):
    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.norm = nn.LayerNorm(dim)
        self.scale = 1 / math.sqrt(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        weights = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)
        return self.norm(x + weights @ v)


class TransformerBlock(nn.Module):
    """A pre-norm transformer block: causal multi-head self-attention through
    ``F.scaled_dot_product_attention``, then a GELU MLP, each with dropout
    on its residual branch."""

    def __init__(self, dim: int = 32, heads: int = 4, dropout: float = 0.1) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        # No bias: the keys' bias has no effect on attention, so its gradient is
        # rounding noise, which Adam's normalized step would amplify.
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, c // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (b, heads, t, c // heads)
        p = self.dropout.p if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        x = x + self.dropout(self.proj(y.transpose(1, 2).reshape(b, t, c)))
        return x + self.dropout(self.mlp(self.norm2(x)))


class TrainingStep(nn.Module):
    """Calling it runs one training step of ``model``: MSE loss, backward,
    optimizer step; it returns the loss and the updated parameters. Compiled,
    the whole step is (Dynamo breaks the graph at the backward call)."""

    def __init__(self, model: nn.Module, optimizer: Callable[[Any], torch.optim.Optimizer]) -> None:
        super().__init__()
        self.model = model
        self.make_optimizer = optimizer
        self.optimizer = optimizer(model.parameters())

    def to(self, *args: Any, **kwargs: Any) -> TrainingStep:
        moved = super().to(*args, **kwargs)
        # Module.to() replaces the parameters it cannot move in place (to
        # another device type): the optimizer is made again, for the moved
        # ones. Its state is created at the first step.
        self.optimizer = self.make_optimizer(self.model.parameters())
        return moved

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The model's inputs, then the target."""
        *x, target = inputs
        self.optimizer.zero_grad(set_to_none=True)
        loss = F.mse_loss(self.model(*x), target)
        # Detached before the graph break at backward(): the code after it
        # gets a leaf, not a tensor whose .grad Dynamo would have to read.
        value = loss.detach()
        loss.backward()
        self.optimizer.step()
        return (value, *(p.detach() for p in self.model.parameters()))


class MaskedAttention(nn.Module):
    """Self-attention with the padding mask Hugging Face models pass to SDPA:
    boolean, (B, 1, 1, S), broadcast over heads and queries."""

    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.heads, c // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        mask = keep[:, None, None, :]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return y.transpose(1, 2).reshape(b, t, c)


class Autocast(nn.Module):
    """``model`` under ``torch.autocast`` of its input's device type, in bf16;
    the output in fp32. Products run in bf16 on every device's policy."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast(x.device.type, dtype=torch.bfloat16):
            return self.model(x).float()


def convnet() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, 4),
    )


def padding_mask() -> torch.Tensor:
    keep = torch.ones(2, 8, dtype=torch.bool)
    keep[1, 5:] = False  # the second sequence is padded after 5 tokens
    return keep


def reductions(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return x.sum(-1), x.amax(0), x.mean(), x.var(-1)


def inplace_views(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    y = x.clone()
    y[:, 1:] += 1
    y.t_()
    z = y.reshape(-1)[::2]
    z.mul_(2)
    return y.relu(), z.unsqueeze(0).expand(2, -1).contiguous()


def scaled_sum(x: torch.Tensor) -> torch.Tensor:
    return x * 2 + x.sum(-1, keepdim=True)


def pointwise(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x + y).sin() * x


CORPUS: tuple[Case, ...] = (
    Case(
        "mlp",
        _seeded(lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))),
        _seeded(lambda: [(torch.randn(4, 16),)]),
    ),
    Case(
        "conv_bn_relu_pool",
        _seeded(
            lambda: nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2)
            ).eval()
        ),
        _seeded(lambda: [(torch.randn(2, 3, 8, 8),)]),
    ),
    Case(
        "attention",
        _seeded(AttentionBlock),
        _seeded(lambda: [(torch.randn(2, 6, 16),)]),
    ),
    Case("reductions", lambda: reductions, _seeded(lambda: [(torch.randn(6, 10),)])),
    Case("inplace_views", lambda: inplace_views, _seeded(lambda: [(torch.randn(4, 6),)])),
    Case(
        "dynamic_shape",
        lambda: scaled_sum,
        _seeded(lambda: [(torch.randn(4, 8),), (torch.randn(6, 8),), (torch.randn(9, 8),)]),
        dynamic=True,
    ),
    Case(
        "transformer_block",
        _seeded(lambda: TransformerBlock().eval()),  # eval: dropout off, results comparable
        _seeded(lambda: [(torch.randn(2, 8, 32),)]),
    ),
    Case(
        "transformer_train_step",
        # Dropout 0: the step's results are comparable across devices.
        _seeded(
            lambda: TrainingStep(
                TransformerBlock(dropout=0.0), lambda params: torch.optim.AdamW(params, lr=1e-2)
            )
        ),
        _seeded(lambda: [(torch.randn(2, 8, 32), torch.randn(2, 8, 32)) for _ in range(2)]),
        tolerance=1e-3,
    ),
    Case(
        "max_autotune_gemm",
        _seeded(lambda: nn.Sequential(nn.Linear(64, 64), nn.ReLU())),
        _seeded(lambda: [(torch.randn(32, 64),)]),
        mode="max-autotune-no-cudagraphs",
    ),
    Case(
        "convnet_train_step_channels_last",
        _seeded(
            lambda: TrainingStep(
                convnet().to(memory_format=torch.channels_last),
                lambda params: torch.optim.SGD(params, lr=0.1),
            )
        ),
        _seeded(
            lambda: [
                (torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last), torch.randn(2, 4))
                for _ in range(2)
            ]
        ),
        tolerance=1e-3,
    ),
    Case(
        "masked_attention",
        _seeded(MaskedAttention),
        _seeded(lambda: [(torch.randn(2, 8, 32), padding_mask())]),
    ),
    Case(
        "autocast_mlp",
        _seeded(lambda: Autocast(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)))),
        _seeded(lambda: [(torch.randn(4, 16),)]),
        tolerance=2e-2,
    ),
    Case(
        "second_device",
        lambda: pointwise,
        _seeded(lambda: [(torch.randn(8), torch.randn(8))]),
        device_index=1,
    ),
)

CASES = {case.name: case for case in CORPUS}


def _workload_cases() -> tuple[Case, ...]:
    from . import models

    def adamw(params: Any) -> torch.optim.Optimizer:
        return torch.optim.AdamW(params, lr=1e-3)

    return (
        Case(
            "vit_autocast_train_step",
            _seeded(
                lambda: TrainingStep(Autocast(models.VisionTransformer(32, 8, 32, 1, 4, 10)), adamw)
            ),
            _seeded(lambda: [(torch.randn(2, 3, 32, 32), torch.randn(2, 10)) for _ in range(2)]),
            tolerance=2e-2,
        ),
        Case(
            "diffusion_block_train_step_channels_last",
            _seeded(
                # SGD: AdamW's step over this many parameters triples the
                # compile time on the CPU, and the GPU row has it.
                lambda: TrainingStep(
                    models.DiffusionBlock(16, 2, 8, groups=4),
                    lambda params: torch.optim.SGD(params, lr=0.1),
                ).to(memory_format=torch.channels_last)
            ),
            _seeded(
                lambda: [
                    (
                        torch.randn(2, 4, 8, 8).to(memory_format=torch.channels_last),
                        torch.tensor([3, 500]),
                        torch.randn(2, 8, 8),
                        torch.randn(2, 4, 8, 8).to(memory_format=torch.channels_last),
                    )
                    for _ in range(2)
                ]
            ),
            tolerance=1e-3,
        ),
        Case(
            "prefill_dynamic",
            # A prefill is inference: no parameter asks for a gradient.
            _seeded(lambda: models.Prefill(32, 1, 4).eval().requires_grad_(False)),
            _seeded(lambda: [(torch.randint(0, 4096, (2, n)),) for n in (3, 5, 9)]),
            dynamic=True,
        ),
        Case(
            "moe_train_step",
            _seeded(lambda: TrainingStep(models.MixtureOfExperts(32, 4, 1), adamw)),
            _seeded(lambda: [(torch.randn(2, 8, 32), torch.randn(2, 8, 32)) for _ in range(2)]),
            tolerance=1e-3,
        ),
    )


#: CPU-sized versions of the GPU benchmark's vision-transformer, diffusion,
#: dynamic-shape prefill and mixture-of-experts rows: larger than the corpus's
#: cases, so they run in acc's own tests rather than in every probe column.
WORKLOAD_CASES: tuple[Case, ...] = _workload_cases()


def compiled_autograd_steps(device: str) -> list[torch.Tensor]:
    """Two training steps of an MLP on ``device``, compiled, whose
    ``backward()`` compiled autograd traces where
    ``torch._dynamo.config.compiled_autograd`` is set: the losses and the
    last step's gradients, on the CPU."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).to(device)

    @torch.compile
    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        loss = F.mse_loss(model(x), y)
        value = loss.detach()  # before the graph break at backward() (see TrainingStep)
        loss.backward()
        return value

    results = []
    for _ in range(2):
        model.zero_grad(set_to_none=True)
        x, y = torch.randn(8, 16), torch.randn(8, 4)
        results.append(step(x.to(device), y.to(device)).cpu())
    return results + [p.grad.cpu() for p in model.parameters()]


def _flatten(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for item in out for t in _flatten(item)]


def digests(out: Any) -> list[str]:
    """SHA-256 of each output tensor's bytes (CPU tensors): what the invariance
    checks compare between stock and patched torch, bit for bit."""
    return [
        hashlib.sha256(t.detach().contiguous().numpy().tobytes()).hexdigest() for t in _flatten(out)
    ]


def device_for(case: Case, device_type: str) -> torch.device:
    if device_type == "cpu":
        return torch.device("cpu")
    return torch.device(device_type, case.device_index)


def compile_kwargs(case: Case, compile_options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`torch.compile` for ``case``: its mode,
    merged into explicit Inductor options where there are some."""
    kwargs = dict(compile_options)
    if case.mode is None or kwargs.get("backend", "inductor") != "inductor":
        return kwargs
    if kwargs.get("options"):
        import torch._inductor

        kwargs["options"] = {**torch._inductor.list_mode_options(case.mode), **kwargs["options"]}
    else:
        kwargs.pop("options", None)
        kwargs["mode"] = case.mode
    return kwargs


def run(
    case: Case, device_type: str, compile_options: dict[str, Any] | None = None
) -> list[list[torch.Tensor]]:
    """Run ``case`` on ``device_type``; compiled when ``compile_options`` is
    given (the keyword arguments of :func:`torch.compile`). Returns the
    outputs of each input set, moved to the CPU."""
    device = device_for(case, device_type)
    model = case.build()
    if isinstance(model, nn.Module):
        model = model.to(device)
    if compile_options is not None:
        model = torch.compile(
            model, dynamic=case.dynamic or None, **compile_kwargs(case, compile_options)
        )
    results = []
    for inputs in case.inputs():
        out = model(*(t.to(device) for t in inputs))
        flat = _flatten(out)
        for t in flat:
            if t.device != device:
                raise AssertionError(f"{case.name}: output on {t.device}, expected {device}")
        # Copies: a CPU output may alias state that later input sets change.
        results.append([t.detach().to("cpu", copy=True) for t in flat])
    return results


def assert_same(case: Case, got: list[list[torch.Tensor]], want: list[list[torch.Tensor]]) -> None:
    """Outputs of two runs of ``case`` agree within the case's tolerance."""
    torch.testing.assert_close(got, want, atol=case.tolerance, rtol=case.tolerance)
