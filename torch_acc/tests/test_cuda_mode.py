"""acc over CUDA memory (``TORCH_ACC_MODE=cuda``): eager ops, streams and
events are CUDA's, and Inductor compiles acc graphs into Triton kernels that
Triton's NVIDIA backend builds, with acc registered only through public
extension points. Runs only where CUDA is usable (``tools/gpu_run.sh``)."""

from __future__ import annotations

import re

import pytest
import torch

from rfc_shared.testing.corpus import CORPUS, assert_same, run


torch_acc = pytest.importorskip("torch_acc")
pytestmark = pytest.mark.skipif(torch_acc.mode != "cuda", reason="acc is not over CUDA memory")


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


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_the_corpus_compiles_on_acc_and_matches_cuda(case) -> None:
    if case.device_index >= torch.acc.device_count():
        pytest.skip(f"needs acc:{case.device_index}")
    want = run(case, "cuda")
    got = run(case, "acc", {"backend": "inductor"})
    assert_same(case, got, want)


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
