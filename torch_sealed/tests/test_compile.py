"""sealed compiles through public extension points only: its convention
module, the lazy hook torch.sealed._inductor_backend_init, and each kernel
call wrapped by DeviceOpOverrides.kernel_call_guard."""

from __future__ import annotations

import pytest
import torch

from rfc_shared.conformance.compile_report import compile_case
from rfc_shared.conformance.corpus import CASES
from rfc_shared.testing.helpers import last_json, run_python
from rfc_shared.testing.monkeypatch_scan import scan_paths


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


def test_importing_sealed_leaves_dynamo_and_inductor_unimported() -> None:
    done = run_python(
        """
        import json, sys, torch, torch_sealed
        import torch_sealed._dynamo.device_interface
        print(json.dumps([m for m in ("torch._dynamo", "torch._inductor") if m in sys.modules]))
        """
    )
    assert last_json(done) == []


def test_sealed_patches_nothing() -> None:
    from pathlib import Path

    assert list(scan_paths([Path(torch_sealed.__file__).parent])) == []


# What sealed cannot run in eager either: it has no convolution and no autocast.
EAGER_UNSUPPORTED = {"conv_bn_relu_pool", "convnet_train_step_channels_last", "autocast_mlp"}


@pytest.mark.parametrize("case", list(CASES))
def test_the_corpus_compiles_or_is_not_run_in_eager(case: str) -> None:
    result = compile_case(case, "inductor", "sealed")
    if case in EAGER_UNSUPPORTED:
        assert result["status"] == "eager-unsupported", result
    else:
        assert result["status"] == "ok", result


def test_each_kernel_call_is_wrapped_and_the_memory_sealed_after() -> None:
    from torch._inductor.utils import run_and_get_code

    x = torch.randn(8, device="sealed:1")
    torch._dynamo.reset()
    out, (code, *_) = run_and_get_code(torch.compile(lambda t: (t.sin() + 1).sum(-1)), x)
    assert out.device == x.device and _C._is_sealed(out) and _C._is_sealed(x)
    torch.testing.assert_close(out.cpu(), (x.cpu().sin() + 1).sum(-1))
    calls = [line.strip() for line in code.splitlines() if "cpp_fused_" in line and "(" in line]
    kernel_calls = [c for c in calls if not c.startswith(("cpp_fused_", "async_compile"))]
    assert kernel_calls and all(
        c.startswith("with torch.sealed._unsealed(") for c in kernel_calls
    ), calls
    assert "device='sealed:1'" in code  # no device guard: allocations name the index


def test_a_kernel_call_left_unwrapped_faults() -> None:
    done = run_python(
        """
        import torch, torch_sealed
        import torch_sealed._inductor as backend
        backend.SealedDeviceOpOverrides.kernel_call_guard = lambda self, name, args: None
        x = torch.randn(8, device="sealed")
        print("compiling", flush=True)
        torch.compile(lambda t: t.cos() * 3)(x)
        print("ran", flush=True)
        """,
        check=False,
    )
    assert "compiling" in done.stdout and "ran" not in done.stdout
    assert done.returncode == -11, done.stderr[-2000:]  # SIGSEGV at the first kernel


def test_registration_refuses_a_torch_that_cannot_wrap_kernel_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from torch._inductor.codegen.common import DeviceOpOverrides

    from torch_sealed._inductor import register_inductor_backend

    monkeypatch.delattr(DeviceOpOverrides, "kernel_call_guard")
    with pytest.raises(RuntimeError, match="cannot wrap kernel calls"):
        register_inductor_backend()


def test_cpp_wrapper_is_refused_with_a_reason() -> None:
    x = torch.randn(4, device="sealed")
    torch._dynamo.reset()
    with pytest.raises(Exception, match="registered no C\\+\\+ wrapper codegen"):
        torch.compile(lambda t: t + 1, options={"cpp_wrapper": True})(x)
