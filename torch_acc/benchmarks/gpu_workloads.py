"""The GPU benchmark's workload rows (``gpu.py``): each row's model, inputs
and compile options, built the same way in every process that measures it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


#: Real workloads: name -> (kind, dtype, size). Device-bound sizes: B x T x C =
#: 8 x 1024 x 1024 (16 heads) for the transformer rows, 2048 x 2048 for the GEMM,
#: 32 x 3 x 224 x 224 for the convnet, B x H x S x D = 8 x 16 x 1024 x 64 for
#: flex attention. Host-bound: 4 x 128 x 256 (4 heads), 8 x 3 x 32 x 32, 1 x 4 x
#: 256 x 64, and the decode (dim 512, 4 layers, one token a step): small enough
#: that the host's time per step decides. fp32 rows run
#: with TF32 on (torch.set_float32_matmul_precision("high")), as Inductor
#: recommends on this GPU.
WORKLOADS: dict[str, tuple[str, torch.dtype, str]] = {
    "block forward bf16 8x1024x1024": ("block", torch.bfloat16, "device"),
    "training step fp32 8x1024x1024": ("train", torch.float32, "device"),
    "training step bf16 8x1024x1024": ("train", torch.bfloat16, "device"),
    "training step fp32 TF32 4x128x256 (host-bound)": ("train", torch.float32, "host"),
    "training step bf16 4x128x256 (host-bound)": ("train", torch.bfloat16, "host"),
    "max-autotune GEMM 2048x2048 bf16": ("gemm", torch.bfloat16, "device"),
    "convnet training step fp32 TF32 NCHW 32x224": ("convnet", torch.float32, "device"),
    "convnet training step bf16 channels_last 32x224": ("convnet_cl", torch.bfloat16, "device"),
    "convnet training step fp32 TF32 NCHW 8x32 (host-bound)": ("convnet", torch.float32, "host"),
    "masked attention training step bf16 8x1024x1024": ("masked", torch.bfloat16, "device"),
    "masked attention training step bf16 4x128x256 (host-bound)": (
        "masked",
        torch.bfloat16,
        "host",
    ),
    "autocast bf16 training step 8x1024x1024": ("autocast", torch.float32, "device"),
    "autocast bf16 training step 4x128x256 (host-bound)": ("autocast", torch.float32, "host"),
    "flex attention causal fwd+bwd bf16 8x16x1024x64": ("flex", torch.bfloat16, "device"),
    "flex attention causal fwd+bwd bf16 1x4x256x64 (host-bound)": ("flex", torch.bfloat16, "host"),
    "HF Llama training step bf16, padded batch 8x512": ("llama", torch.bfloat16, "device"),
    "HF Llama training step bf16, padded batch 4x128 (host-bound)": (
        "llama",
        torch.bfloat16,
        "host",
    ),
    "Llama-style greedy decode bf16, static KV cache, reduce-overhead, 32 tokens": (
        "decode",
        torch.bfloat16,
        "host",
    ),
    "ViT training step, autocast bf16, AdamW, 32x224 (6 layers, width 384)": (
        "vit",
        torch.float32,
        "device",
    ),
    "diffusion UNet block training step bf16 channels_last 4x320x32x32": (
        "diffusion",
        torch.bfloat16,
        "device",
    ),
    "Llama-style prefill, dynamic=True, bf16, 7 prompt lengths 17-311": (
        "prefill",
        torch.bfloat16,
        "device",
    ),
    "top-2 mixture-of-experts training step bf16 8x512x1024, 8 experts": (
        "moe",
        torch.bfloat16,
        "device",
    ),
}
TRAINING_KINDS = (
    "train",
    "convnet",
    "convnet_cl",
    "masked",
    "autocast",
    "flex",
    "llama",
    "vit",
    "diffusion",
    "moe",
)
#: Steps of a workload under cProfile: where the host's time per step goes.
HOST_PROFILE_CALLS = 20
WORKLOAD_DEVICES = ("cuda", "acc")
#: The prefill row's prompt lengths (tokens), each one call of the compiled
#: model: dynamic=True compiles them into one graph.
PREFILL_LENGTHS = (17, 45, 78, 128, 190, 255, 311)


def resnet_like(width: int = 64) -> torch.nn.Module:
    """A ResNet-18-shaped convnet (a stem, four stages of two residual blocks,
    batch norm, global pooling, a classifier), made here: the GPU machine has
    no torchvision."""
    from torch import nn

    class Residual(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                nn.BatchNorm2d(cout),
            )
            self.skip = (
                nn.Identity()
                if stride == 1 and cin == cout
                else nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.body(x) + self.skip(x))

    layers: list[nn.Module] = [
        nn.Conv2d(3, width, 7, 2, 3, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1),
    ]
    cin = width
    for stage, cout in enumerate((width, 2 * width, 4 * width, 8 * width)):
        layers += [Residual(cin, cout, 1 if stage == 0 else 2), Residual(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


class FlexStep(torch.nn.Module):
    """Causal flex attention, forward and backward (forward only on the CPU,
    where flex attention has no backward): returns the output and the query's
    gradient."""

    def __init__(self, seq: int, device: str) -> None:
        super().__init__()
        self.backward = device != "cpu"
        from torch.nn.attention.flex_attention import create_block_mask

        def causal(b, h, q, kv):
            return q >= kv

        self.block_mask = create_block_mask(causal, None, None, seq, seq, device=device)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple:
        from torch.nn.attention.flex_attention import flex_attention

        q = q.detach().requires_grad_(self.backward)
        out = flex_attention(q, k, v, block_mask=self.block_mask)
        if not self.backward:
            return out, out
        (grad,) = torch.autograd.grad(out.float().sum(), q)
        return out.detach(), grad


class LlamaStep(torch.nn.Module):
    """A training step of Hugging Face's LlamaForCausalLM (its default SDPA
    attention, which passes the padding mask to SDPA): loss, backward, AdamW.
    Returns the loss."""

    def __init__(self, hidden: int, layers: int, heads: int) -> None:
        super().__init__()
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(
            vocab_size=4096,
            hidden_size=hidden,
            intermediate_size=hidden * 4,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=heads,
            max_position_embeddings=2048,
        )
        self.model = LlamaForCausalLM(config)
        self.optimizer: torch.optim.Optimizer | None = None

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        if self.optimizer is None:  # made for the parameters on their device
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.optimizer.zero_grad(set_to_none=True)
        labels = ids.masked_fill(~keep, -100)  # no loss on the padding
        loss = self.model(input_ids=ids, attention_mask=keep.long(), labels=labels).loss
        value = loss.detach()
        loss.backward()
        self.optimizer.step()
        return value


class DecodeStep(torch.nn.Module):
    """A Llama-style decoder's greedy decoding in gpt-fast's shape: one token
    per call of the compiled step, keys and values written into a static
    cache with ``index_copy_``, attention masked to the positions so far.
    ``forward`` decodes ``tokens`` tokens and returns the last step's logits
    (the graph-captured step's outputs are cloned before the next replay)."""

    def __init__(self, dim: int, layers: int, heads: int, cache: int, tokens: int) -> None:
        super().__init__()
        from torch import nn

        self.heads, self.tokens = heads, tokens
        self.embed = nn.Embedding(4096, dim)
        self.norms = nn.ModuleList(nn.RMSNorm(dim) for _ in range(2 * layers + 1))
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim, bias=False) for _ in range(layers))
        self.out = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.up = nn.ModuleList(nn.Linear(dim, 4 * dim, bias=False) for _ in range(layers))
        self.down = nn.ModuleList(nn.Linear(4 * dim, dim, bias=False) for _ in range(layers))
        self.head = nn.Linear(dim, 4096, bias=False)
        shape = (layers, 1, heads, cache, dim // heads)
        self.register_buffer("keys", torch.zeros(shape))
        self.register_buffer("values", torch.zeros(shape))
        self.step: Callable[..., torch.Tensor] = self.decode_one  # compiled by the caller

    def decode_one(self, token: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
        import torch.nn.functional as F

        x = self.embed(token)  # 1 x 1 x dim
        visible = (torch.arange(self.keys.shape[3], device=x.device) <= position).view(1, 1, 1, -1)
        for i in range(len(self.qkv)):
            q, k, v = (
                t.view(1, 1, self.heads, -1).transpose(1, 2)
                for t in self.qkv[i](self.norms[2 * i](x)).chunk(3, -1)
            )
            self.keys[i].index_copy_(2, position, k)
            self.values[i].index_copy_(2, position, v)
            attended = F.scaled_dot_product_attention(
                q, self.keys[i], self.values[i], attn_mask=visible
            )
            x = x + self.out[i](attended.transpose(1, 2).reshape(x.shape))
            x = x + self.down[i](F.silu(self.up[i](self.norms[2 * i + 1](x))))
        return self.head(self.norms[-1](x))

    def forward(self, token: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        for step in range(self.tokens):
            logits = self.step(token, positions[step : step + 1]).clone()
            token = logits.argmax(-1)
        return logits


class PrefillOverLengths(torch.nn.Module):
    """Prefills each prompt it is called with through ``model``, compiled
    with ``dynamic=True`` (one graph for every length), and returns the
    last prompt's logits."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model
        self.compiled = torch.compile(model, dynamic=True)

    def forward(self, *prompts: torch.Tensor) -> torch.Tensor:
        for prompt in prompts:
            logits = self.compiled(prompt)
        return logits


def _workload(
    kind: str, dtype: torch.dtype, size: str, device: str, small: bool
) -> tuple[Callable[..., Any], list[torch.Tensor], dict[str, Any] | None]:
    """The compiled workload ``kind`` on ``device``, its inputs and compile
    options (None: the workload compiles its own steps). The model and
    inputs are made on the CPU from fixed seeds, so each device's process
    gets the same ones."""
    from torch import nn

    from rfc_shared.conformance import models
    from rfc_shared.conformance.corpus import (
        Autocast,
        MaskedAttention,
        TrainingStep,
        TransformerBlock,
    )

    host = small or size == "host"

    def adamw(params: Any) -> torch.optim.Optimizer:
        return torch.optim.AdamW(params, lr=1e-4)

    b, t, c, heads, n = (4, 128, 256, 4, 64) if host else (8, 1024, 1024, 16, 2048)
    if small:
        b, t, c, heads = 2, 16, 64, 4
    torch.manual_seed(0)
    if kind == "gemm":
        inputs = [torch.randn(n, n, dtype=dtype) for _ in range(2)]
        return torch.mm, [x.to(device) for x in inputs], {"mode": "max-autotune-no-cudagraphs"}
    if kind == "llama":
        # Hidden 256, 2 layers, 4 heads (host-bound); 1024, 8, 16 otherwise.
        hidden, layers, lheads, lb, lt = (256, 2, 4, 4, 128) if host else (1024, 8, 16, 8, 512)
        if small:
            hidden, layers, lheads, lb, lt = 64, 1, 4, 2, 16
        step_model = LlamaStep(hidden, layers, lheads).to(device=device, dtype=dtype)
        ids = torch.randint(0, 4096, (lb, lt))
        keep = torch.ones(lb, lt, dtype=torch.bool)
        keep[1:, lt // 2 :] = False  # padded sequences, as a batch of uneven texts
        return step_model, [ids.to(device), keep.to(device)], {}
    if kind == "decode":
        dim, layers, heads, tokens = (64, 1, 4, 4) if small else (512, 4, 8, 32)
        model = DecodeStep(dim, layers, heads, cache=64 if small else 256, tokens=tokens)
        model = model.to(device=device, dtype=dtype)
        # Graph capture is a GPU's: the CPU's dry run compiles without it.
        model.step = torch.compile(
            model.decode_one, **({} if device == "cpu" else {"mode": "reduce-overhead"})
        )
        token = torch.zeros(1, 1, dtype=torch.long, device=device)
        return model, [token, torch.arange(tokens, device=device)], None
    if kind == "prefill":
        dim, layers, heads = (32, 1, 4) if small else (1024, 8, 16)
        lengths = (3, 5, 9) if small else PREFILL_LENGTHS
        prefill = models.Prefill(dim, layers, heads).requires_grad_(False)
        model = PrefillOverLengths(prefill).to(device, dtype).eval()
        prompts = [torch.randint(0, 4096, (4, n)) for n in lengths]
        return model, [p.to(device) for p in prompts], None
    if kind == "diffusion":
        channels, heads, context, groups, side, images = (
            (32, 4, 16, 8, 8, 2) if small else (320, 8, 768, 32, 32, 4)
        )
        model = TrainingStep(models.DiffusionBlock(channels, heads, context, groups), adamw)
        model = model.to(device=device, dtype=dtype, memory_format=torch.channels_last)
        latents, noise = (
            torch.randn(images, 4, side, side).to(
                device=device, dtype=dtype, memory_format=torch.channels_last
            )
            for _ in range(2)
        )
        steps = torch.randint(0, 1000, (images,)).to(device)
        text = torch.randn(images, 8 if small else 77, context).to(device=device, dtype=dtype)
        return model, [latents, steps, text, noise], {}
    if kind == "flex":
        bf, hf, s, d = (1, 4, 256, 64) if host else (8, 16, 1024, 64)
        qkv = [torch.randn(bf, hf, s, d, dtype=dtype) for _ in range(3)]
        return FlexStep(s, device), [x.to(device) for x in qkv], {}

    memory_format = torch.channels_last if kind == "convnet_cl" else torch.contiguous_format
    if kind.startswith("convnet"):
        images, side = (8, 32) if host else (32, 224)
        model: nn.Module = TrainingStep(
            resnet_like(16 if small else 64),
            lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
        )
        inputs = [torch.randn(images, 3, side, side), torch.randn(images, 1000)]
    elif kind == "vit":
        image, patch, width, layers, vheads, classes, images = (
            (32, 8, 32, 1, 4, 10, 2) if small else (224, 16, 384, 6, 6, 1000, 32)
        )
        vit = models.VisionTransformer(image, patch, width, layers, vheads, classes)
        model = TrainingStep(Autocast(vit), adamw)
        inputs = [torch.randn(images, 3, image, image), torch.randn(images, classes)]
    elif kind == "moe":
        # 4 layers of width 1024 over 8 x 512 tokens (host: 1 of 64 over 2 x 16).
        dim, experts, layers, mb, mt = (64, 4, 1, 2, 16) if small else (1024, 8, 4, 8, 512)
        model = TrainingStep(models.MixtureOfExperts(dim, experts, layers), adamw)
        inputs = [torch.randn(mb, mt, dim), torch.randn(mb, mt, dim)]
    elif kind == "masked":
        keep = torch.ones(b, t, dtype=torch.bool)
        keep[1:, t // 2 :] = False  # padded sequences, as a batch of uneven texts

        class Masked(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.attention = MaskedAttention(dim=c, heads=heads)
                self.register_buffer("keep", keep)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.attention(x, self.keep)

        model = TrainingStep(Masked(), adamw)
        inputs = [torch.randn(b, t, c), torch.randn(b, t, c)]
    else:
        block = TransformerBlock(dim=c, heads=heads, dropout=0.0)
        inputs = [torch.randn(b, t, c)]
        if kind == "block":
            model = block.eval()
        else:
            model = TrainingStep(Autocast(block) if kind == "autocast" else block, adamw)
            inputs.append(torch.randn(b, t, c))
    model = model.to(device=device, dtype=dtype, memory_format=memory_format)
    moved = [i.to(device=device, dtype=dtype) for i in inputs]
    moved[0] = moved[0].contiguous(memory_format=memory_format) if moved[0].dim() == 4 else moved[0]
    return model, moved, {}


def compiled_step(name: str, device: str, small: bool = False) -> Callable[[], Any]:
    """One step of the workload row ``name`` on ``device``, compiled as the
    benchmark runs it: acc's Inductor backend registered, TF32 on for fp32
    rows, gradients only for training rows."""
    kind, dtype, size = WORKLOADS[name]
    if device == "acc":
        from torch_acc.registration import register_inductor_backend

        register_inductor_backend()  # whichever slices discover it
    if dtype == torch.float32:
        torch.set_float32_matmul_precision("high")  # TF32, as Inductor recommends
    fn, inputs, options = _workload(kind, dtype, size, device, small=small)
    compiled = fn if options is None else torch.compile(fn, **options)
    grad = torch.enable_grad() if kind in TRAINING_KINDS else torch.no_grad()

    def step() -> Any:
        with grad:
            return compiled(*inputs)

    return step


def selected_rows(only: str) -> list[str]:
    """The workload rows whose name has one of ``only``'s ``|``-separated texts,
    in the order of the texts (a run that may be stopped part-way measures
    the first ones first)."""
    texts = only.split("|") if only else [""]
    first_text = {
        name: next((i for i, text in enumerate(texts) if text in name), None) for name in WORKLOADS
    }
    return sorted((n for n, i in first_text.items() if i is not None), key=first_text.__getitem__)
