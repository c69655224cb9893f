"""acc in eager mode: the corpus matches the CPU, and the runtime API works."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from rfc_shared.conformance.corpus import CORPUS, assert_same, run
from rfc_shared.testing.helpers import last_json, run_python


torch_acc = pytest.importorskip("torch_acc")


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_corpus_eager_on_acc_matches_cpu(case) -> None:
    assert_same(case, run(case, "acc"), run(case, "cpu"))


def test_corpus_eager_matches_cpu_in_host_mode() -> None:
    done = run_python(
        """
        import json, torch, torch_acc
        from rfc_shared.conformance.corpus import CORPUS, assert_same, run
        for case in CORPUS:
            assert_same(case, run(case, "acc"), run(case, "cpu"))
        print(json.dumps([torch_acc.mode, len(CORPUS)]))
        """,
        env={"TORCH_ACC_MODE": "host"},
    )
    assert last_json(done) == ["host", len(CORPUS)]


def test_a_bad_mode_is_refused() -> None:
    done = run_python("import torch_acc", env={"TORCH_ACC_MODE": "npu"}, check=False)
    assert done.returncode != 0
    assert "TORCH_ACC_MODE='npu' is not one of cuda, gpu, host" in done.stderr


def test_cuda_mode_without_cuda_is_refused() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    done = run_python("import torch_acc", env={"TORCH_ACC_MODE": "cuda"}, check=False)
    assert done.returncode != 0
    assert "TORCH_ACC_MODE=cuda needs a usable CUDA device" in done.stderr


def test_the_fallback_aliases_memory_instead_of_copying() -> None:
    x = torch.arange(12.0, device="acc").reshape(3, 4)
    view = x.t()  # explicit view kernel
    diagonal = x.diagonal()  # through the fallback: a view of the same storage
    assert diagonal.device == x.device
    assert diagonal.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    x.mul_(2)  # in-place through the fallback writes the acc memory
    assert diagonal.cpu().tolist() == [0.0, 10.0, 20.0]
    assert view.cpu()[1, 0].item() == 2.0


@pytest.mark.parametrize(
    "loss", [F.mse_loss, F.smooth_l1_loss, F.huber_loss], ids=lambda f: f.__name__
)
def test_reducing_losses_resize_no_output(loss) -> None:
    # Through their out= kernels these warned that an output of shape [] was
    # resized to the inputs' shape (the suite turns warnings into errors).
    x, target = torch.randn(2, 3, device="acc"), torch.randn(2, 3, device="acc")
    out = loss(x, target)
    assert out.shape == () and out.device.type == "acc"
    torch.testing.assert_close(out.cpu(), loss(x.cpu(), target.cpu()))


def test_group_norm_on_a_channels_last_tensor_matches_cpu() -> None:
    # Before torch 2.15, ATen's composite kernel took acc's call and failed to
    # view a channels_last input ("view size is not compatible").
    torch.manual_seed(0)
    x = torch.randn(2, 8, 5, 5).to(memory_format=torch.channels_last).requires_grad_()
    norm = torch.nn.GroupNorm(4, 8)
    on_acc = x.detach().to("acc").requires_grad_()
    out = torch.nn.GroupNorm(4, 8).to("acc")(on_acc)
    out.sum().backward()
    want = norm(x)
    want.sum().backward()
    torch.testing.assert_close(out.cpu(), want)
    torch.testing.assert_close(on_acc.grad.cpu(), x.grad)


def test_out_arguments_that_need_resizing_follow_the_cpu_kernel() -> None:
    a = torch.randn(3, 4, device="acc")
    out = torch.empty(0, device="acc")
    torch.add(a, a, out=out)
    assert out.shape == (3, 4) and out.device.type == "acc"
    torch.testing.assert_close(out.cpu(), 2 * a.cpu())


@pytest.mark.parametrize(
    ("op", "shapes"),
    [
        (torch.mm, [(3, 4), (4, 5)]),
        (torch.addmm, [(5,), (3, 4), (4, 5)]),
        (torch.bmm, [(2, 3, 4), (2, 4, 5)]),
        (torch.baddbmm, [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_matrix_product_kernels_write_out_arguments_and_resize_them(op, shapes) -> None:
    cpu = [torch.randn(shape) for shape in shapes]
    acc = [t.to("acc") for t in cpu]
    want = op(*cpu)
    exact = torch.empty(want.shape, device="acc")
    empty = torch.empty(0, device="acc:1")  # resized into new memory, on its own device
    assert op(*acc, out=exact) is exact
    op(*acc, out=empty)
    for out in (exact, empty):
        torch.testing.assert_close(out.cpu(), want)
    assert empty.device == torch.device("acc", 1) and empty.shape == want.shape


def test_copies_storage_and_resize() -> None:
    x = torch.randn(5)
    a = x.to("acc:1")
    assert a.device == torch.device("acc", 1)
    torch.testing.assert_close(a.to("acc:0").cpu(), x)
    storage = a.untyped_storage()
    assert storage.device.type == "acc"
    assert bytes(storage.cpu()) == bytes(x.untyped_storage())
    a.resize_(10)
    assert a.shape == (10,)
    torch.testing.assert_close(a[:5].cpu(), x)


def test_devices_streams_and_events() -> None:
    assert torch.acc.is_available() and torch.acc.device_count() == 2
    with torch.acc.device(1):
        assert torch.acc.current_device() == 1
        assert torch.ones(1, device="acc").device.index == 1
    assert torch.acc.current_device() == 0
    with pytest.raises(IndexError, match="out of range"):
        torch.acc.set_device(5)

    stream = torch.acc.Stream()
    assert isinstance(stream, torch.Stream) and stream.stream_id != 0
    with torch.acc.stream(stream):
        assert torch.acc.current_stream().stream_id == stream.stream_id
    assert torch.acc.current_stream().stream_id == 0

    start, end = torch.acc.Event(enable_timing=True), torch.acc.Event(enable_timing=True)
    start.record()
    torch.randn(64, 64, device="acc").sum()
    end.record()
    end.synchronize()
    assert start.query() and start.elapsed_time(end) >= 0
    stream.wait_event(end)
    stream.synchronize()
    assert stream.query()


def test_random_numbers_follow_acc_generators() -> None:
    torch.acc.manual_seed(7)
    first = torch.randn(4, device="acc").cpu()
    state = torch.acc.get_rng_state()
    second = torch.randn(4, device="acc").cpu()
    torch.acc.set_rng_state(state)
    torch.testing.assert_close(torch.randn(4, device="acc").cpu(), second)
    torch.acc.manual_seed(7)
    torch.testing.assert_close(torch.randn(4, device="acc").cpu(), first)


def test_device_properties_and_memory() -> None:
    props = torch.acc.get_device_properties("acc:1")
    assert props.multi_processor_count > 0 and props.warp_size == 32
    assert props.name.startswith("acc:1")
    before = torch.acc.memory_allocated(0)
    block = torch.empty(1024, device="acc")
    assert torch.acc.memory_allocated(0) >= before + 4096
    del block
    assert torch.acc.memory_allocated(0) == before


def test_generated_methods() -> None:
    t = torch.zeros(2).acc()
    assert t.is_acc and t.device.type == "acc"
    module = torch.nn.Linear(2, 2).acc()
    assert next(module.parameters()).is_acc


def test_foreach_copy_writes_every_destination_in_place() -> None:
    # Graph trees copy each replay's inputs with one _foreach_copy_.
    dests = [torch.zeros(3, device="acc"), torch.zeros(4, 2, device="acc").t()]
    storages = [d.untyped_storage().data_ptr() for d in dests]
    sources = [torch.arange(3.0, device="acc"), torch.arange(8.0).reshape(2, 4)]
    torch._foreach_copy_(dests, sources)
    assert [d.untyped_storage().data_ptr() for d in dests] == storages
    for dest, source in zip(dests, sources, strict=True):
        assert dest.device.type == "acc" and torch.equal(dest.cpu(), source.cpu())


def test_foreach_copy_hands_the_whole_list_to_the_peer() -> None:
    # One call of the peer's kernel on aliases, not a copy_ per tensor through
    # acc's _copy_from (over CUDA memory: one fused launch instead of one a tensor).
    dests = [torch.zeros(3, device="acc"), torch.zeros(2, 2, device="acc")]
    sources = [torch.ones(3, device="acc"), torch.full((2,), 2.0, device="acc")]
    cpu = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=cpu, acc_events=True) as prof:  # keep every event
        torch._foreach_copy_(dests, sources)
    ops = [event.name for event in prof.events()]
    assert "aten::_foreach_copy_" in ops and "aten::_copy_from" not in ops, ops
    assert torch.equal(dests[1].cpu(), torch.full((2, 2), 2.0))  # broadcast, not resized


def test_a_convolution_and_its_backward_choose_their_kernel_once() -> None:
    # acc's convolution kernels hand their arguments to the peer's at once:
    # ATen's choice of backend runs on the peer alone, not first on acc to
    # reach the overrideable pair and then again on the peer.
    torch.manual_seed(0)
    x, w, b = torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3), torch.randn(4)
    leaves = [t.to("acc").requires_grad_() for t in (x, w, b)]
    cpu = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=cpu, acc_events=True) as prof:  # keep every event
        out = torch.nn.functional.conv2d(*leaves, padding=1)
        out.sum().backward()
    ops = [event.name for event in prof.events()]
    assert ops.count("aten::_convolution") == 1, ops
    assert not {"aten::convolution_overrideable", "aten::convolution_backward_overrideable"} & set(
        ops
    ), ops
    expected = [t.clone().requires_grad_() for t in (x, w, b)]
    want = torch.nn.functional.conv2d(*expected, padding=1)
    want.sum().backward()
    torch.testing.assert_close(out.cpu(), want)
    for got, leaf in zip(leaves, expected, strict=True):
        torch.testing.assert_close(got.grad.cpu(), leaf.grad)


def test_a_convolution_refuses_a_weight_on_another_device() -> None:
    x = torch.randn(1, 3, 4, 4, device="acc")
    with pytest.raises(RuntimeError, match="expected its weight on acc like its input"):
        torch.nn.functional.conv2d(x, torch.randn(2, 3, 3, 3))
