"""acc's compile-time pieces, registered through public extension points."""

from __future__ import annotations

import pytest
import torch

from rfc_shared.testing.helpers import last_json, run_python


torch_acc = pytest.importorskip("torch_acc")


def test_importing_acc_and_its_interface_leaves_dynamo_and_inductor_unimported() -> None:
    done = run_python(
        """
        import json, sys, torch, torch_acc
        import torch_acc._dynamo.device_interface
        print(json.dumps([m for m in ("torch._dynamo", "torch._inductor") if m in sys.modules]))
        """
    )
    assert last_json(done) == []


def test_the_acc_option_changes_the_generated_wrapper() -> None:
    from torch._inductor.utils import run_and_get_code

    from torch_acc._inductor import config
    from torch_acc.registration import register_inductor_backend

    register_inductor_backend()
    x = torch.randn(4, device="acc")

    def compiled_code(check: bool) -> str:
        torch._dynamo.reset()
        with config.patch(check_input_devices=check):
            _, (code, *_) = run_and_get_code(torch.compile(lambda t: t.cos() + 1), x)
        return code

    assert "acc.check_input_devices" not in compiled_code(False)
    checked = compiled_code(True)
    assert "assert arg0_1.device.type == 'acc'" in checked


def test_the_triton_plugin_reports_acc_and_refuses_to_build_machine_code() -> None:
    from triton.backends import backends
    from triton.backends.compiler import GPUTarget

    plugin = backends["acc"]
    assert plugin.driver.is_active()
    target = plugin.driver().get_current_target()
    assert target == GPUTarget("acc", 10, 32)
    compiler = plugin.compiler(target)
    with pytest.raises(RuntimeError, match="compiles no machine code.*TRITON_INTERPRET=1"):
        compiler.add_stages({}, compiler.parse_options({}))


def test_device_op_overrides_emit_acc_runtime_calls() -> None:
    from torch_acc._inductor.device_op_overrides import AccDeviceOpOverrides

    overrides = AccDeviceOpOverrides()
    assert overrides.device_guard(1) == "torch.acc._DeviceGuard(1)"
    namespace: dict[str, object] = {}
    exec(overrides.import_get_raw_stream_as("get_raw_stream"), namespace)
    assert namespace["get_raw_stream"](1) == torch_acc._C._raw_stream(1)


def test_the_interface_adds_acc_to_the_cpp_options_of_its_memory() -> None:
    from torch._inductor.cpp_builder import get_cpp_torch_device_options

    from torch_acc.registration import device_interface

    definitions, include_dirs, *_ = device_interface().get_cpp_device_options(False, False)
    cpu_definitions, cpu_include_dirs, *_ = get_cpp_torch_device_options("cpu")
    assert definitions == [*cpu_definitions, "USE_ACC"] and include_dirs == cpu_include_dirs


def test_acc_declares_graph_capture_only_over_cuda_memory() -> None:
    from torch_acc._dynamo.device_interface import _GRAPHS, DeviceInterface

    over_cuda = torch_acc.mode == "cuda"
    assert DeviceInterface.graph_capture() is (_GRAPHS if over_cuda else None)
    # Over CUDA memory every graph operation is CUDA's (torch_acc/tests/test_cuda_mode.py).
    assert _GRAPHS.Graph is torch.cuda.CUDAGraph
    assert _GRAPHS.graph_pool_handle is torch.cuda.graph_pool_handle


@pytest.mark.slice("static_launcher")
def test_acc_registers_a_static_launcher_only_over_cuda_memory() -> None:
    from torch._inductor.runtime.static_triton_launcher import (
        StaticallyLaunchedCudaKernel,
        has_static_launcher,
        registered_static_launchers,
    )

    from torch_acc.registration import register_inductor_backend

    register_inductor_backend()
    # Over host memory acc's Triton kernels run in Triton's interpreter: there
    # is no binary to launch (torch_acc/tests/test_cuda_mode.py launches them).
    assert has_static_launcher("acc") == (torch_acc.mode == "cuda")
    if torch_acc.mode == "cuda":
        assert registered_static_launchers()["acc"] is StaticallyLaunchedCudaKernel


def test_storages_handed_back_by_the_peer_allocator_are_labelled_acc_again() -> None:
    # What CUDA's caching allocator does to the live storages when graph trees
    # restore a pool's checkpoint: their DataPtr says the peer device.
    peer = "cuda" if torch_acc.mode == "cuda" else "cpu"
    storage = torch.arange(4.0, device=peer).untyped_storage()
    assert storage.device.type == peer
    torch_acc._C._label_storages_as_acc([storage._cdata], 0)
    assert storage.device == torch.device("acc", 0)
    tensor = torch.empty(0, device="acc").set_(storage, 0, (4,), (1,))
    assert tensor.device == torch.device("acc", 0)
    assert tensor.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_graph_trees_rebuild_outputs_on_acc_storages_without_an_allocation() -> None:
    from torch_acc._dynamo.device_interface import _GRAPHS

    base = torch.arange(12.0, device="acc")
    metadata = {
        "dtype": torch.float32,
        "size": (2, 3),
        "stride": (1, 2),
        "storage_offset": 5,
        "device": base.device,
    }
    rebuilt = _GRAPHS.tensor_from_storage(metadata, base.untyped_storage())
    expected = base.as_strided((2, 3), (1, 2), 5)
    assert rebuilt.device == base.device and rebuilt.untyped_storage().data_ptr() == base.data_ptr()
    assert torch.equal(rebuilt.cpu(), expected.cpu())
    with pytest.raises(RuntimeError, match="not acc"):
        _GRAPHS.tensor_from_storage(metadata, torch.arange(3.0).untyped_storage())
