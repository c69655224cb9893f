"""Models of the kinds users train and serve beyond the corpus's blocks: a
vision transformer, a diffusion UNet's down/up block, a Llama-style prefill
over prompts of many lengths and a mixture-of-experts layer. Each takes its
sizes as arguments: the corpus builds them CPU-sized, the GPU benchmark
(torch_acc/benchmarks/gpu.py) at device-bound sizes.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class VisionTransformer(nn.Module):
    """A ViT classifier: a strided patch convolution, a class token and
    learned positions, pre-norm encoder layers through
    ``nn.MultiheadAttention`` (SDPA inside, no mask) and a GELU MLP, and a
    linear head on the class token."""

    def __init__(
        self, image: int, patch: int, width: int, layers: int, heads: int, classes: int
    ) -> None:
        super().__init__()
        self.patches = nn.Conv2d(3, width, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, width) * 0.02)
        self.positions = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, width) * 0.02)
        self.layers = nn.ModuleList(_EncoderLayer(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.patches(images).flatten(2).transpose(1, 2)  # (B, patches, width)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.positions
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x[:, 0]))


class _EncoderLayer(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm1(x)
        x = x + self.attention(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class _ResBlock(nn.Module):
    """GroupNorm, SiLU, 3x3 convolution twice, the time embedding added in
    between; a 1x1 convolution on the skip where the channels change."""

    def __init__(self, cin: int, cout: int, time_dim: int, groups: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.time = nn.Linear(time_dim, cout)
        self.norm2 = nn.GroupNorm(groups, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time(F.silu(t))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class _SpatialAttention(nn.Module):
    """GroupNorm, then self-attention over the pixels and cross-attention to
    a text context, both through SDPA, then a GEGLU feed-forward; in and
    out of the (B, pixels, C) sequence by reshapes of the feature map."""

    def __init__(self, channels: int, heads: int, context_dim: int, groups: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(groups, channels)
        self.proj_in = nn.Linear(channels, channels)
        self.norm1 = nn.LayerNorm(channels)
        self.qkv = nn.Linear(channels, 3 * channels, bias=False)
        self.out1 = nn.Linear(channels, channels)
        self.norm2 = nn.LayerNorm(channels)
        self.q = nn.Linear(channels, channels, bias=False)
        self.kv = nn.Linear(context_dim, 2 * channels, bias=False)
        self.out2 = nn.Linear(channels, channels)
        self.norm3 = nn.LayerNorm(channels)
        self.geglu = nn.Linear(channels, 8 * channels)
        self.ff_out = nn.Linear(4 * channels, channels)
        self.proj_out = nn.Linear(channels, channels)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        return x.view(b, n, self.heads, c // self.heads).transpose(1, 2)

    def _attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        y = F.scaled_dot_product_attention(self._heads(q), self._heads(k), self._heads(v))
        return y.transpose(1, 2).flatten(2)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        s = self.proj_in(self.norm(x).flatten(2).transpose(1, 2))  # (B, pixels, C)
        s = s + self.out1(self._attend(*self.qkv(self.norm1(s)).chunk(3, -1)))
        s = s + self.out2(self._attend(self.q(self.norm2(s)), *self.kv(context).chunk(2, -1)))
        value, gate = self.geglu(self.norm3(s)).chunk(2, -1)
        s = s + self.ff_out(value * F.gelu(gate))
        return x + self.proj_out(s).transpose(1, 2).reshape(b, c, h, w)


class DiffusionBlock(nn.Module):
    """A diffusion UNet's down and up block around a middle: a sinusoidal
    time embedding, residual blocks with attention, a strided-convolution
    downsample, nearest-neighbour upsampling and the skip concatenated.
    Called with the noisy latents, the timesteps and a text context; returns
    the predicted noise."""

    def __init__(
        self, channels: int, heads: int, context_dim: int, groups: int = 32, latent: int = 4
    ) -> None:
        super().__init__()
        self.channels = channels
        time_dim = 4 * channels
        self.time = nn.Sequential(
            nn.Linear(channels, time_dim), nn.SiLU(), nn.Linear(time_dim, time_dim)
        )
        self.stem = nn.Conv2d(latent, channels, 3, padding=1)
        self.down_res = _ResBlock(channels, channels, time_dim, groups)
        self.down_attn = _SpatialAttention(channels, heads, context_dim, groups)
        self.down = nn.Conv2d(channels, channels, 3, stride=2, padding=1)
        self.mid_res = _ResBlock(channels, 2 * channels, time_dim, groups)
        self.mid_attn = _SpatialAttention(2 * channels, heads, context_dim, groups)
        self.up_conv = nn.Conv2d(2 * channels, channels, 3, padding=1)
        self.up_res = _ResBlock(2 * channels, channels, time_dim, groups)
        self.up_attn = _SpatialAttention(channels, heads, context_dim, groups)
        self.out = nn.Sequential(
            nn.GroupNorm(groups, channels), nn.SiLU(), nn.Conv2d(channels, latent, 3, padding=1)
        )

    def _embed(self, steps: torch.Tensor) -> torch.Tensor:
        half = self.channels // 2
        freqs = torch.exp(
            -torch.arange(half, device=steps.device, dtype=torch.float32)
            * (torch.log(torch.tensor(10000.0)) / half)
        )
        angles = steps.float()[:, None] * freqs[None]
        embedding = torch.cat([angles.sin(), angles.cos()], dim=-1)
        return self.time(embedding.to(self.stem.weight.dtype))

    def forward(
        self, latents: torch.Tensor, steps: torch.Tensor, context: torch.Tensor
    ) -> torch.Tensor:
        t = self._embed(steps)
        skip = self.down_attn(self.down_res(self.stem(latents), t), context)
        h = self.mid_attn(self.mid_res(self.down(skip), t), context)
        h = self.up_conv(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        h = self.up_attn(self.up_res(torch.cat([h, skip], dim=1), t), context)
        return self.out(h)


class Prefill(nn.Module):
    """A Llama-style decoder's prefill: RMSNorm, rotary positions, causal
    SDPA and a SwiGLU MLP per layer; returns the next token's logits for
    each prompt of the batch."""

    def __init__(self, dim: int, layers: int, heads: int, vocab: int = 4096) -> None:
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.norms = nn.ModuleList(nn.RMSNorm(dim) for _ in range(2 * layers + 1))
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim, bias=False) for _ in range(layers))
        self.out = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.gate_up = nn.ModuleList(nn.Linear(dim, 6 * dim, bias=False) for _ in range(layers))
        self.down = nn.ModuleList(nn.Linear(3 * dim, dim, bias=False) for _ in range(layers))
        self.head = nn.Linear(dim, vocab, bias=False)

    def _rotate(self, x: torch.Tensor) -> torch.Tensor:
        t, d = x.shape[-2], x.shape[-1]
        freqs = 1.0 / 10000 ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
        angles = torch.arange(t, device=x.device, dtype=torch.float32)[:, None] * freqs
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        even, odd = x[..., 0::2], x[..., 1::2]
        return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        b, t, c = x.shape
        for i in range(len(self.qkv)):
            q, k, v = (
                h.view(b, t, self.heads, -1).transpose(1, 2)
                for h in self.qkv[i](self.norms[2 * i](x)).chunk(3, -1)
            )
            y = F.scaled_dot_product_attention(self._rotate(q), self._rotate(k), v, is_causal=True)
            x = x + self.out[i](y.transpose(1, 2).reshape(b, t, c))
            gate, up = self.gate_up[i](self.norms[2 * i + 1](x)).chunk(2, -1)
            x = x + self.down[i](F.silu(gate) * up)
        return self.head(self.norms[-1](x[:, -1]))


class MixtureOfExperts(nn.Module):
    """Top-2 mixture-of-experts layers with capacity dispatch, as Switch and
    GShard route tokens: a softmax router picks two experts per token, a
    cumulative sum gives each token its slot in an expert's buffer (tokens
    past the capacity are dropped), ``index_add`` gathers the tokens into
    the (experts, capacity, dim) buffer, ``bmm`` runs every expert's MLP
    at once, and the outputs are weighted and added back to the tokens."""

    def __init__(self, dim: int, experts: int, layers: int, capacity_factor: float = 1.25) -> None:
        super().__init__()
        self.experts, self.capacity_factor = experts, capacity_factor
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.routers = nn.ModuleList(nn.Linear(dim, experts, bias=False) for _ in range(layers))
        self.w_in = nn.ParameterList(
            nn.Parameter(torch.randn(experts, dim, 4 * dim) * dim**-0.5) for _ in range(layers)
        )
        self.w_out = nn.ParameterList(
            nn.Parameter(torch.randn(experts, 4 * dim, dim) * (4 * dim) ** -0.5)
            for _ in range(layers)
        )

    def _layer(self, i: int, x: torch.Tensor) -> torch.Tensor:
        tokens = x.flatten(0, -2)  # (N, dim)
        n, dim = tokens.shape
        capacity = int(self.capacity_factor * 2 * n / self.experts)
        h = self.norms[i](tokens)
        weights, chosen = self.routers[i](h).float().softmax(-1).topk(2, dim=-1)  # (N, 2)
        one_hot = F.one_hot(chosen.t().reshape(-1), self.experts)  # (2N, E), first choices first
        slot = ((one_hot.cumsum(0) - 1) * one_hot).sum(-1)  # each choice's place in its expert
        kept = slot < capacity
        index = torch.where(kept, chosen.t().reshape(-1) * capacity + slot, 0)
        rows = h.repeat(2, 1) * kept[:, None].to(h.dtype)
        buffer = h.new_zeros(self.experts * capacity, dim).index_add(0, index, rows)
        hidden = F.gelu(torch.bmm(buffer.view(self.experts, capacity, dim), self.w_in[i]))
        outputs = torch.bmm(hidden, self.w_out[i]).view(-1, dim)[index]  # (2N, dim)
        scale = (weights.t().reshape(-1) * kept).to(h.dtype)[:, None]
        combined = (outputs * scale).view(2, n, dim).sum(0)
        return x + combined.view(x.shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(len(self.routers)):
            x = self._layer(i, x)
        return x
