"""Scaled dot product attention on acc: routed to the overrideable fused op,
which runs the peer's fused kernels, and kept as one extern kernel by Inductor."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from rfc_shared.testing.helpers import last_json, run_python


torch_acc = pytest.importorskip("torch_acc")

FUSED = "aten::_scaled_dot_product_fused_attention_overrideable"


def qkv(*shape: int, layout: str = "contiguous") -> list[torch.Tensor]:
    torch.manual_seed(0)
    tensors = [torch.randn(*shape) for _ in range(3)]
    if layout == "transposed":  # (B, S, H, D) memory seen as (B, H, S, D)
        tensors = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in tensors]
    elif layout == "packed":  # views of one (B, S, 3, H, D) projection, not dense
        b, h, s, d = shape
        packed = torch.stack(tensors, 0).permute(1, 3, 0, 2, 4).contiguous()
        tensors = list(packed.permute(2, 0, 3, 1, 4).unbind(0))
    return tensors


def ops_run(fn, *args) -> set[str]:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn(*args)
    return {event.name for event in prof.events()}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "packed"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_sdpa_runs_the_fused_op_and_matches_cpu(layout: str, causal: bool) -> None:
    cpu = [t.detach().requires_grad_() for t in qkv(2, 4, 8, 16, layout=layout)]
    # The same layout on acc (Tensor.to would make dense copies).
    acc = [
        torch.empty_strided(t.size(), t.stride(), device="acc").copy_(t.detach()).requires_grad_()
        for t in cpu
    ]
    want = F.scaled_dot_product_attention(*cpu, is_causal=causal)
    got = F.scaled_dot_product_attention(*acc, is_causal=causal)
    assert type(got.grad_fn).__name__ == "ScaledDotProductFusedAttentionOverrideableBackward0"
    assert got.device == acc[0].device
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)
    grad = torch.randn_like(want)
    want.backward(grad)
    got.backward(grad.to("acc"))
    for a, c in zip(acc, cpu, strict=True):
        assert a.grad.device == a.device
        torch.testing.assert_close(a.grad.cpu(), c.grad, atol=1e-5, rtol=1e-5)


def test_sdpa_with_a_mask_and_bf16() -> None:
    q, k, v = (t.to(torch.bfloat16) for t in qkv(1, 2, 8, 16))
    mask = torch.ones(8, 8, dtype=torch.bool).tril()
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    args = [t.to("acc") for t in (q, k, v)]
    assert FUSED in ops_run(F.scaled_dot_product_attention, *args, mask.to("acc"))
    got = F.scaled_dot_product_attention(*args, attn_mask=mask.to("acc"))
    torch.testing.assert_close(got.cpu(), want, atol=2e-2, rtol=2e-2)


def test_calls_the_peer_has_no_fused_kernel_for_take_the_math_path() -> None:
    q, k, v = (t.to("acc") for t in qkv(2, 4, 8, 16))
    # The CPU's flash attention has no dropout, and the fused op no enable_gqa.
    ops = ops_run(lambda: F.scaled_dot_product_attention(q, k, v, dropout_p=0.5))
    assert FUSED not in ops
    assert "aten::_scaled_dot_product_attention_math" in ops
    kv = k[:, :2], v[:, :2]
    grouped = ops_run(lambda: F.scaled_dot_product_attention(q, *kv, enable_gqa=True))
    assert FUSED not in grouped
    # sdpa_kernel selects the math path; OVERRIDEABLE alone selects the fused op.
    with sdpa_kernel(SDPBackend.MATH):
        assert FUSED not in ops_run(F.scaled_dot_product_attention, q, k, v)
    with sdpa_kernel(SDPBackend.OVERRIDEABLE):
        assert FUSED in ops_run(F.scaled_dot_product_attention, q, k, v)


COMPILED_SDPA = """
import json, os, re, torch, torch_acc
import torch.nn.functional as F
from torch._inductor.utils import run_and_get_code

def f(packed):
    # q, k, v: views of one (B, S, 3, H, D) projection, not dense
    q, k, v = packed.permute(2, 0, 3, 1, 4).unbind(0)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).sin().sum()

torch.manual_seed(0)
cpu = [torch.randn(2, 8, 3, 4, 16, requires_grad=True)]
acc = [t.detach().to("acc").requires_grad_() for t in cpu]
f(*cpu).backward()
compiled = torch.compile(f)
_, codes = run_and_get_code(lambda: compiled(*acc).backward())
close = all(torch.allclose(a.grad.cpu(), c.grad, atol=1e-5) for a, c in zip(acc, cpu))
calls = [
    call for code in codes
    for call in re.findall(r"^ *buf\\d+ = (torch\\.ops\\.aten\\.\\w+\\.default)\\(", code, re.M)
]
decomposed = any("bmm" in code or "softmax" in code for code in codes)
print(json.dumps([close, calls, decomposed]), flush=True)
# Skip the interpreter's teardown: after a backward on acc in host mode it has
# aborted now and then ("terminate called without an active exception"), after
# everything this test checks had run.
os._exit(0)
"""


@pytest.mark.parametrize("mode", ["gpu", "host"])
def test_inductor_keeps_sdpa_as_one_extern_kernel(mode: str) -> None:
    done = run_python(COMPILED_SDPA, env={"TORCH_ACC_MODE": mode, "TRITON_INTERPRET": "1"})
    close, calls, decomposed = last_json(done)
    assert close
    assert calls == [
        "torch.ops.aten._scaled_dot_product_fused_attention_overrideable.default",
        "torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward.default",
    ]
    assert not decomposed, json.dumps(calls)


COMPILED_BLOCK = """
import json, re, torch, torch_acc
from torch._inductor.utils import run_and_get_code
from rfc_shared.conformance.corpus import CASES

block = CASES["transformer_block"].build().to("acc")
(x,) = CASES["transformer_block"].inputs()[0]
_, codes = run_and_get_code(torch.compile(block), x.to("acc"))
calls = [
    call for code in codes
    for call in re.findall(r"^ *buf\\d+ = (torch\\.ops\\.aten\\.\\w+\\.default)\\(", code, re.M)
]
print(json.dumps([calls, [w for w in ("bmm", "softmax") if any(w in c for c in codes)]]))
"""


@pytest.mark.parametrize("mode", ["gpu", "host"])
def test_the_compiled_transformer_block_calls_the_fused_attention_op(mode: str) -> None:
    # The corpus's block: its causal scaled_dot_product_attention is one
    # extern kernel in acc's generated code, not a decomposition into bmm and
    # softmax.
    done = run_python(COMPILED_BLOCK, env={"TORCH_ACC_MODE": mode, "TRITON_INTERPRET": "1"})
    calls, decomposed = last_json(done)
    assert calls == ["torch.ops.aten._scaled_dot_product_fused_attention_overrideable.default"]
    assert decomposed == []
