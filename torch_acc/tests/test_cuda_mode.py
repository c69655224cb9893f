"""acc over CUDA memory (``TORCH_ACC_MODE=cuda``): eager ops, streams and
events are CUDA's, and Inductor compiles acc graphs into Triton kernels that
Triton's NVIDIA backend builds, with acc registered only through public
extension points. Runs only where CUDA is usable (``tools/gpu_run.sh``)."""

from __future__ import annotations

import contextlib
import copy
import re

import pytest
import torch

from rfc_shared.conformance.corpus import (
    CORPUS,
    WORKLOAD_CASES,
    assert_same,
    compiled_autograd_steps,
    run,
)
from rfc_shared.testing.helpers import run_python


torch_acc = pytest.importorskip("torch_acc")
pytestmark = [
    pytest.mark.skipif(torch_acc.mode != "cuda", reason="acc is not over CUDA memory"),
    # Graph trees capture an empty graph to create their pool (CUDA's own
    # warning, recorded away by PyTorch but an error under this suite's
    # filters), and fp32 matmuls warn about TF32 on Hopper.
    pytest.mark.filterwarnings("ignore:The CUDA Graph is empty:UserWarning"),
    pytest.mark.filterwarnings("ignore:TensorFloat32 tensor cores:UserWarning"),
]


@pytest.fixture(autouse=True)
def fresh_dynamo(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_acc_memory_is_cuda_memory_and_eager_ops_run_there() -> None:
    x = torch.randn(64, 64, device="cuda")
    a = x.to("acc")
    assert a.device == torch.device("acc", 0)
    ptr = a.data_ptr()
    before = torch.cuda.memory_allocated()
    b = (a @ a + 1).relu().sum(0)
    assert b.device.type == "acc"
    assert torch.cuda.memory_allocated() > before  # acc's results live in CUDA's pool
    torch.testing.assert_close(b.cpu(), ((x @ x + 1).relu().sum(0)).cpu())
    a.mul_(2)  # in place through the fallback, on the same memory
    assert a.data_ptr() == ptr
    torch.testing.assert_close(a.cpu(), (x * 2).cpu())


def test_acc_streams_and_events_are_cuda_streams_and_events() -> None:
    s = torch.acc.Stream()
    with torch.acc.stream(s):
        assert torch.acc.current_stream() == s
        assert torch.cuda.current_stream().cuda_stream == torch_acc._C._raw_stream(0)
    start, end = torch.acc.Event(enable_timing=True), torch.acc.Event(enable_timing=True)
    start.record()
    torch.randn(1024, 1024, device="acc").sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0
    assert torch.acc.get_device_properties().multi_processor_count == (
        torch.cuda.get_device_properties(0).multi_processor_count
    )


@pytest.mark.parametrize("case", CORPUS + WORKLOAD_CASES, ids=lambda c: c.name)
def test_the_corpus_compiles_on_acc_and_matches_cuda(case) -> None:
    if case.device_index >= torch.acc.device_count():
        pytest.skip(f"needs acc:{case.device_index}")
    # A training step's backward cannot run on cuda in a process whose
    # accelerator is acc (docs: "One accelerator per process"): acc's eager step
    # is its reference.
    from rfc_shared.conformance.corpus import TrainingStep

    want = run(case, "acc" if isinstance(case.build(), TrainingStep) else "cuda")
    got = run(case, "acc", {"backend": "inductor"})
    assert_same(case, got, want)


def test_compiled_autograd_on_acc_matches_cuda(tmp_path) -> None:
    from torch._dynamo.utils import counters

    counters.clear()
    with torch._dynamo.config.patch(compiled_autograd=True):  # see test_workloads.py
        got = compiled_autograd_steps("acc")
    assert counters["compiled_autograd"]["captures"] >= 1
    # cuda's backward runs in a process that never loads acc (docs: "One
    # accelerator per process").
    run_python(
        f"""
        import torch
        from rfc_shared.conformance.corpus import compiled_autograd_steps
        torch._dynamo.config.compiled_autograd = True
        torch.save(compiled_autograd_steps("cuda"), {str(tmp_path / "cuda.pt")!r})
        """,
        env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    want = torch.load(tmp_path / "cuda.pt")
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


# CUDA picks cuDNN's attention for bf16 on Hopper; without cuDNN, flash
# attention; for fp32, memory-efficient attention. acc runs the same kernel.
@pytest.mark.parametrize(
    ("dtype", "cudnn"),
    [(torch.bfloat16, True), (torch.bfloat16, False), (torch.float32, True)],
    ids=["bf16", "bf16-no-cudnn", "fp32"],
)
@pytest.mark.parametrize("layout", ["contiguous", "from-qkv-projection"])
def test_sdpa_runs_cudas_fused_kernels_through_the_overrideable_op(dtype, cudnn, layout) -> None:
    from torch._inductor.utils import run_and_get_code
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def f(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    torch.manual_seed(0)
    # (3, B, H, S, D), or (B, S, 3, H, D) split as a transformer block splits
    # its QKV projection.
    data = torch.randn((3, 2, 4, 128, 64) if layout == "contiguous" else (2, 128, 3, 4, 64))
    grad = torch.randn(2, 4, 128, 64)

    def leaves(device: str) -> list[torch.Tensor]:
        t = data.to(device=device, dtype=dtype)
        qkv = t.unbind(0) if layout == "contiguous" else t.permute(2, 0, 3, 1, 4).unbind(0)
        return [x.detach().requires_grad_() for x in qkv]

    enabled = [SDPBackend.OVERRIDEABLE, SDPBackend.FLASH_ATTENTION]
    enabled += [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    enabled += [SDPBackend.CUDNN_ATTENTION] if cudnn else []
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    acc = leaves("acc")
    math = [t.detach().float().requires_grad_() for t in acc]  # the reference, in fp32
    with sdpa_kernel(enabled):
        want = f(*leaves("cuda"))
        got = f(*acc)
        assert type(got.grad_fn).__name__ == "ScaledDotProductFusedAttentionOverrideableBackward0"
        torch.testing.assert_close(got.cpu(), want.cpu(), **tol)
        # Gradients against acc's math path: CUDA's own backward cannot run in
        # a process whose accelerator is acc (docs: "One accelerator per process").
        with sdpa_kernel(SDPBackend.MATH):
            f(*math).backward(grad.to("acc"))
        got.backward(grad.to("acc", dtype))
        for a, m in zip(acc, math, strict=True):
            torch.testing.assert_close(a.grad.float().cpu(), m.grad.cpu(), **tol)
        out, (code,) = run_and_get_code(torch.compile(f), *(t.detach() for t in acc))
    assert code.count("_scaled_dot_product_fused_attention_overrideable.default(") == 1
    torch.testing.assert_close(out.cpu(), want.detach().cpu(), **tol)


# The masks Hugging Face models pass, with 100 keys (not a multiple of the
# memory-efficient kernel's 16): SDPA hands the overrideable op the mask
# unexpanded, and CUDA's fused kernels want it expanded (and aligned) as
# CUDA's own route prepares it.
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=["bf16", "fp32"])
@pytest.mark.parametrize(
    ("shape", "kind"),
    [((2, 1, 100, 100), "float"), ((1, 1, 100, 100), "bool"), ((2, 1, 1, 100), "bool")],
    ids=["additive-per-batch", "bool-broadcast", "bool-padding"],
)
def test_sdpa_with_broadcast_masks_matches_cuda(dtype, shape, kind) -> None:
    def f(q, k, v, m):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)

    torch.manual_seed(0)
    qkv = torch.randn(3, 2, 4, 100, 64)
    mask = torch.rand(shape) > 0.3 if kind == "bool" else torch.randn(shape)
    if kind == "bool":
        mask[..., 0] = True
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {"atol": 1e-4, "rtol": 1e-4}

    def run(fn, device: str, math: bool = False) -> list[torch.Tensor]:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        leaves = [t.to(device, dtype).requires_grad_() for t in qkv.unbind(0)]
        m = mask.to(device, dtype if kind == "float" else torch.bool)
        with sdpa_kernel(SDPBackend.MATH) if math else contextlib.nullcontext():
            out = fn(*leaves, m)
            if device == "cuda":  # CUDA's own backward cannot run where acc is the accelerator
                return [out.detach().float().cpu()]
            out.float().sum().backward()
        return [out.detach().float().cpu(), *(t.grad.float().cpu() for t in leaves)]

    math = run(f, "acc", math=True)
    torch.testing.assert_close(math[:1], run(f, "cuda"), **tol)
    torch.testing.assert_close(run(f, "acc"), math, **tol)
    torch.testing.assert_close(run(torch.compile(f), "acc"), math, **tol)


# Flex attention compiles to Inductor's Triton templates on acc (rfc3_followup),
# forward and backward, with a causal block mask; the reference is SDPA in
# float64 on the CPU.
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=["bf16", "fp32"])
def test_flex_attention_runs_inductors_triton_templates_on_acc(dtype) -> None:
    from torch._inductor.utils import run_and_get_code
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    torch.manual_seed(0)
    qkv = torch.randn(3, 2, 4, 256, 64).unbind(0)
    reference = [t.double().requires_grad_() for t in qkv]
    causal = torch.ones(256, 256, dtype=torch.bool).tril()
    want = torch.nn.functional.scaled_dot_product_attention(*reference, attn_mask=causal)
    want.sum().backward()

    block_mask = create_block_mask(lambda b, h, q, kv: q >= kv, None, None, 256, 256, device="acc")
    leaves = [t.to("acc", dtype).requires_grad_() for t in qkv]
    out, (code, *_) = run_and_get_code(
        torch.compile(flex_attention), *leaves, block_mask=block_mask
    )
    assert "triton_tem_" in code  # the flex template, not a fallback
    out.float().sum().backward()
    tol = {"atol": 3e-2, "rtol": 3e-2} if dtype == torch.bfloat16 else {"atol": 2e-3, "rtol": 2e-3}
    torch.testing.assert_close(out.detach().double().cpu(), want.detach(), **tol)
    for got, ref in zip(leaves, reference, strict=True):
        torch.testing.assert_close(got.grad.double().cpu(), ref.grad, **tol)


def test_max_autotune_tunes_cudas_triton_gemm_templates_on_acc() -> None:
    from torch._inductor.utils import run_and_get_code

    from torch_acc.registration import heuristics_registry

    a, b = (torch.randn(512, 512, device="acc", dtype=torch.bfloat16) for _ in range(2))
    compiled = torch.compile(lambda a, b: (a @ b).relu(), mode="max-autotune-no-cudagraphs")
    out, (code,) = run_and_get_code(compiled, a, b)
    assert heuristics_registry().get_heuristic_device_alias("acc") == "cuda"
    assert "triton_tem_" in code or "extern_kernels.mm" in code  # whichever won
    torch.testing.assert_close(out.cpu(), (a.cpu() @ b.cpu()).relu(), atol=0.5, rtol=2e-2)


@pytest.mark.slice("backend_feature")
def test_a_compiled_training_step_keeps_its_optimizer_state_on_acc() -> None:
    """acc declares graph capture over CUDA memory, so Dynamo makes the new
    AdamW state capturable, as on cuda: step counts on acc, and no host
    kernel (whose C++ build once cost each acc process about a minute)."""
    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    model = torch.nn.Linear(16, 16).to("acc")
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)

    model(torch.randn(4, 16, device="acc")).square().mean().backward()
    # The step alone: a compiled backward resumes in frames whose non-leaf
    # locals Dynamo reads .grad of, a warning this suite turns into an error.
    _, codes = run_and_get_code(torch.compile(opt.step))
    assert {state["step"].device.type for state in opt.state.values()} == {"acc"}
    assert not any("cpp_fused" in code for code in codes)


@pytest.mark.slice("backend_feature")
def test_a_channels_last_bf16_convnet_step_keeps_cudnns_layout_on_acc() -> None:
    """acc declares channels-last convolutions: fake tensors expect cuDNN's
    layout, so the compiled step hands cuDNN channels-last activations and
    gets them back with no conversion, as cuda's does; its losses and
    gradients match acc's eager step's."""
    from rfc_shared.conformance.corpus import convnet

    torch.manual_seed(0)
    x = torch.randn(8, 3, 32, 32).to(memory_format=torch.channels_last)
    y = torch.randint(0, 4, (8,))

    def forward(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
        first = model[0](x)
        return [first, torch.nn.functional.cross_entropy(model[1:](first).float(), y)]

    torch.manual_seed(0)
    model = convnet().to("acc", torch.bfloat16).to(memory_format=torch.channels_last)
    eager_model = copy.deepcopy(model)
    inputs = (x.to("acc", torch.bfloat16), y.to("acc"))
    # The backward outside the compiled function (compiled with it by
    # AOTAutograd): a backward inside would break the graph, and the resumed
    # frame's non-leaf locals have their .grad read, a warning this suite
    # turns into an error.
    first, loss = torch.compile(forward)(model, *inputs)
    loss.backward()
    want_first, want_loss = forward(eager_model, *inputs)
    want_loss.backward()
    assert first.is_contiguous(memory_format=torch.channels_last) and not first.is_contiguous()
    tol = {"atol": 3e-2, "rtol": 3e-2}
    torch.testing.assert_close(first, want_first, **tol)
    torch.testing.assert_close(loss, want_loss, **tol)
    for got, want in zip(model.parameters(), eager_model.parameters(), strict=True):
        torch.testing.assert_close(got.grad, want.grad, **tol)


@pytest.mark.slice("static_launcher")
def test_acc_kernels_compiled_in_subprocesses_launch_through_cudas_static_launcher(
    monkeypatch,
) -> None:
    """acc registers CUDA's static launcher for its Triton kernels, and the
    compile subprocesses, which do not import acc, get it with each kernel: acc's
    kernels skip Triton's Python launcher as cuda's do."""
    from torch._inductor.async_compile import AsyncCompile
    from torch._inductor.runtime.static_triton_launcher import StaticallyLaunchedCudaKernel

    AsyncCompile.use_process_pool()
    AsyncCompile.wait_pool_ready()
    assert AsyncCompile.use_process_pool(), "this test needs compile subprocesses"
    launched = []
    run = StaticallyLaunchedCudaKernel.run

    def counting_run(self, *args):
        launched.append(self.name)
        return run(self, *args)

    monkeypatch.setattr(StaticallyLaunchedCudaKernel, "run", counting_run)

    def f(x: torch.Tensor) -> torch.Tensor:
        return (x.sin() + 1).relu().sum(0)

    x = torch.randn(256, 64, device="acc")
    torch.testing.assert_close(torch.compile(f)(x).cpu(), f(x.cpu()))
    assert launched


def test_generated_code_is_nvidia_triton_with_acc_runtime_calls() -> None:
    from torch._inductor.utils import run_and_get_code

    def f(x, y):
        return torch.softmax(x @ y, -1) * 2

    x, y = torch.randn(64, 32, device="acc"), torch.randn(32, 16, device="acc")
    out, (code, *_) = run_and_get_code(torch.compile(f), x, y)
    torch.testing.assert_close(out.cpu(), f(x.cpu(), y.cpu()), atol=1e-4, rtol=1e-4)
    assert "@triton.jit" in code
    assert "from torch_acc._C_cuda import _empty_strided" in code
    assert "torch.acc._DeviceGuard(0)" in code
    assert not re.search(r"empty_strided\([^)]*device='acc'", code)  # no generic allocation
    from triton.backends import backends

    assert not backends["acc"].driver.is_active()  # CUDA's driver launches the cubins


def test_the_acc_triton_backend_builds_cubins_for_the_acc_target() -> None:
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    cc = torch.cuda.get_device_capability()
    backend = make_backend(GPUTarget("acc", cc[0] * 10 + cc[1], 32))
    assert backend.binary_ext == "cubin"
    assert backend.target.backend == "cuda"


def test_the_cpp_wrapper_uses_acc_device_type_stream_type_and_options() -> None:
    from torch._inductor.utils import run_and_get_code

    def f(x):
        return torch.softmax(x, -1) * 2 + x.cos()

    x = torch.randn(64, 32, device="acc")
    compiled = torch.compile(f, options={"cpp_wrapper": True})
    out, (code, *_) = run_and_get_code(compiled, x)
    assert out.device == x.device
    torch.testing.assert_close(out.cpu(), f(x.cpu()), atol=1e-5, rtol=1e-5)
    assert "cached_torch_device_type_privateuse1" in code  # acc's ATen device type
    assert "cudaStream_t stream0" in code  # acc's stream type: acc:i is CUDA device i
    # acc's compile options: the wrapper refuses to build without USE_ACC.
    assert "#ifndef USE_ACC" in code


# Graph capture (slice graph_capture): acc declares it over CUDA memory and
# delegates every graph operation to torch.cuda, acc:i being CUDA device i.


@pytest.fixture
def acc_inductor() -> None:
    """acc's Inductor backend, registered through its public entry, so that
    these tests need no slice beyond graph_capture and those it requires."""
    from torch_acc.registration import register_inductor_backend

    register_inductor_backend()


def _layers(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    for _ in range(4):
        x = torch.softmax((x @ w).relu() + 1, -1)
    return x


def _cudagraph_skips() -> int:
    from torch._dynamo.utils import counters

    return counters["inductor"]["cudagraph_skips"]


@pytest.mark.slice("graph_capture")
@pytest.mark.parametrize("device", ["cuda", "acc"])
def test_reduce_overhead_records_cuda_graphs(device: str, acc_inductor: None) -> None:
    from torch._dynamo.utils import counters
    from torch._inductor import cudagraph_trees

    counters.clear()
    torch.manual_seed(0)
    w = torch.randn(64, 64, device="cuda").to(device)
    compiled = torch.compile(_layers, mode="reduce-overhead")
    for _ in range(4):  # warm up, record, replay, replay: new input values each time
        x = torch.randn(32, 64, device="cuda").to(device)
        torch.compiler.cudagraph_mark_step_begin()
        got = compiled(x, w)
        assert got.device == x.device
        torch.testing.assert_close(got.cpu(), _layers(x, w).cpu(), atol=1e-4, rtol=1e-4)
    assert _cudagraph_skips() == 0
    manager = cudagraph_trees.get_manager(0, False, device_type=device)
    assert manager.graph_capture is manager.device_interface.graph_capture()
    graphs = [node.graph for node in manager.get_roots()]
    assert graphs and all(isinstance(g, torch.cuda.CUDAGraph) for g in graphs)


@pytest.mark.slice("graph_capture")
def test_a_sibling_recording_on_acc_restores_the_pool_and_keeps_storages_acc(
    acc_inductor: None,
) -> None:
    """Recording after a replay restores the pool's checkpoint, which hands the
    live outputs CUDA DataPtrs; acc labels them acc again."""
    from torch._dynamo.utils import counters

    counters.clear()
    first = torch.compile(lambda x: (x * 2).relu(), mode="reduce-overhead")
    second = torch.compile(lambda y: y.sin(), mode="reduce-overhead")
    third = torch.compile(lambda y: y.cos() + 1, mode="reduce-overhead")
    x = torch.randn(1024, device="acc")
    for step in range(7):
        torch.compiler.cudagraph_mark_step_begin()
        y = first(x)
        then = second if step < 3 else third  # a new child of first's node
        z = then(y)
        want = (x * 2).relu()
        want = want.sin() if step < 3 else want.cos() + 1
        torch.testing.assert_close(z.cpu(), want.cpu())
        assert y.untyped_storage().device.type == "acc"
    assert _cudagraph_skips() == 0


@pytest.mark.slice("graph_capture")
def test_a_training_step_under_reduce_overhead_on_acc_matches_acc_eager(
    acc_inductor: None,
) -> None:
    # The reference is acc's eager backward: CUDA's own backward cannot run in a
    # process whose accelerator is acc (docs: "One accelerator per process").
    from torch._dynamo.utils import counters

    counters.clear()
    torch.manual_seed(0)
    reference = torch.nn.Sequential(
        torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)
    ).to("acc")
    model = copy.deepcopy(reference)
    compiled = torch.compile(model, mode="reduce-overhead")
    for _ in range(4):
        x = torch.randn(32, 64, device="acc")
        torch.compiler.cudagraph_mark_step_begin()
        model.zero_grad()
        reference.zero_grad()
        compiled(x).square().mean().backward()
        reference(x).square().mean().backward()
        for got, want in zip(model.parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(got.grad.cpu(), want.grad.cpu(), atol=1e-5, rtol=1e-4)
    assert _cudagraph_skips() == 0


@pytest.mark.slice("graph_capture")
def test_the_dynamo_cudagraphs_backend_records_cuda_graphs_on_acc() -> None:
    """Graph trees without Inductor's code generation: real CUDA graphs on acc
    through acc's interface alone."""
    from torch._dynamo.utils import counters
    from torch._inductor import cudagraph_trees

    counters.clear()
    w = torch.randn(64, 64, device="acc")
    compiled = torch.compile(_layers, backend="cudagraphs")
    for _ in range(4):
        x = torch.randn(32, 64, device="acc")
        torch.compiler.cudagraph_mark_step_begin()
        torch.testing.assert_close(compiled(x, w).cpu(), _layers(x, w).cpu(), atol=1e-4, rtol=1e-4)
    assert _cudagraph_skips() == 0
    manager = cudagraph_trees.get_manager(0, False, device_type="acc")
    assert [type(node.graph) for node in manager.get_roots()] == [torch.cuda.CUDAGraph]
