"""sealed in eager mode: results are the CPU's, and its memory is sealed
whenever none of its kernels runs."""

from __future__ import annotations

import pytest
import torch

from rfc_shared.testing.helpers import run_python


torch_sealed = pytest.importorskip("torch_sealed")
from torch_sealed import _C  # noqa: E402


# One process holds one PrivateUse1 backend: these tests run where it is sealed
# (--privateuse1-backend torch_sealed, as nox -s sealed runs them). torch.manual_seed()
# warns that sealed's minimal device module has no manual_seed_all.
pytestmark = [
    pytest.mark.skipif(
        torch._C._get_privateuse1_backend_name() != "sealed",
        reason="the process's PrivateUse1 backend is not sealed",
    ),
    pytest.mark.filterwarnings("ignore:Set seed for `sealed` device does not take effect"),
]


def test_the_device_module_is_minimal() -> None:
    module = torch.sealed
    assert (module.is_available(), module.device_count(), module.current_device()) == (True, 2, 0)
    for missing in ("synchronize", "get_device_properties", "Stream", "Event", "current_stream"):
        assert not hasattr(module, missing), missing
    assert str(torch.accelerator.current_accelerator()) == "sealed"


def test_memory_is_sealed_outside_its_kernels() -> None:
    x = torch.arange(6.0).reshape(2, 3).to("sealed:1")
    y = x.t().sum(0)
    assert x.device == torch.device("sealed", 1) and y.device == x.device
    assert _C._is_sealed(x) and _C._is_sealed(y)
    with torch.sealed._unsealed(x, 3, y):
        assert not _C._is_sealed(x) and not _C._is_sealed(y)
        with torch.sealed._unsealed(x):  # openings nest
            pass
        assert not _C._is_sealed(x)
    assert _C._is_sealed(x) and _C._is_sealed(y)
    torch.testing.assert_close(y.cpu(), torch.tensor([3.0, 12.0]))


def test_operators_match_the_cpu() -> None:
    a, b = torch.randn(4, 5), torch.randn(5, 3)
    sa, sb = a.to("sealed"), b.to("sealed")
    torch.testing.assert_close((sa @ sb).cpu(), a @ b)
    torch.testing.assert_close(torch.softmax(sa, -1).cpu(), torch.softmax(a, -1))
    torch.testing.assert_close(sa[:, 1:].unfold(1, 2, 1).cpu(), a[:, 1:].unfold(1, 2, 1))
    assert sa.sum().item() == pytest.approx(a.sum().item(), rel=1e-5)


def test_reducing_losses_resize_no_output() -> None:
    # Through its out= kernel mse_loss warned that an output of shape [] was
    # resized to the inputs' shape (the suite turns warnings into errors).
    x, target = torch.randn(2, 3), torch.randn(2, 3)
    out = torch.nn.functional.mse_loss(x.to("sealed"), target.to("sealed"))
    assert out.shape == () and _C._is_sealed(out)
    torch.testing.assert_close(out.cpu(), torch.nn.functional.mse_loss(x, target))


def test_in_place_views_and_out_arguments() -> None:
    x = torch.zeros(3, 4, device="sealed")
    x[:, 1:].add_(1)
    x.t_()
    assert x.shape == (4, 3) and _C._is_sealed(x)
    out = torch.empty(0, device="sealed")
    torch.add(x, x, out=out)  # grows its storage
    assert out.shape == (4, 3) and _C._is_sealed(out)
    torch.testing.assert_close(out.cpu(), 2 * x.cpu())
    storage = out.untyped_storage()
    storage.resize_(storage.nbytes() * 2)
    torch.testing.assert_close(out.cpu(), 2 * x.cpu())


def test_no_streams_and_no_events() -> None:
    with pytest.raises(RuntimeError):
        torch.Stream(device="sealed")
    with pytest.raises(RuntimeError):
        torch.Event(device="sealed").record()


def test_touching_sealed_memory_outside_a_kernel_faults() -> None:
    done = run_python(
        """
        import ctypes, torch, torch_sealed
        x = torch.ones(4, device="sealed")
        with torch.sealed._unsealed(x):
            print(ctypes.c_float.from_address(x.data_ptr()).value, flush=True)
        ctypes.c_float.from_address(x.data_ptr()).value
        print("read sealed memory", flush=True)
        """,
        check=False,
    )
    assert done.stdout.split() == ["1.0"]
    assert done.returncode == -11, done.stderr[-2000:]  # SIGSEGV
