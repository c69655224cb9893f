"""Faults in a backend's code: compile goes on without the backend or fails
with a clear message, nothing is half-registered, and a retry works."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.helpers import last_json, run_python, write_distribution


@pytest.fixture
def registry():
    import torch._dynamo.device_interface as device_interface

    device_interface.get_registered_device_interfaces()
    return device_interface


def _acc_entries(registry) -> dict:
    return {k: v for k, v in registry.device_interfaces.items() if k.split(":")[0] == "acc"}


def _drop_acc(registry) -> None:
    for key in _acc_entries(registry):
        del registry.device_interfaces[key]


def test_a_plugin_that_raises_at_load_is_skipped_and_compile_goes_on(tmp_path: Path) -> None:
    write_distribution(
        tmp_path,
        "flaky-backend",
        "[torch_inductor_backends]\nflakydev = flaky_backend:register\n",
        {
            "flaky_backend.py": """
            from torch._inductor.codegen.common import register_device_op_overrides
            from torch._inductor.codegen.cpu_device_op_overrides import CpuDeviceOpOverrides

            def register():
                register_device_op_overrides("flakydev", CpuDeviceOpOverrides())
                raise OSError("libflaky.so: cannot open shared object file")
            """
        },
    )
    done = run_python(
        """
        import json, warnings, torch, torch_acc
        from torch._inductor.codegen import common
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            on_cpu = torch.compile(lambda x: x + 1)(torch.ones(2)).tolist()
            on_acc = torch.compile(lambda x: x * 3)(torch.ones(2, device="acc")).cpu().tolist()
        print(json.dumps({
            "warnings": [str(w.message) for w in caught if "flakydev" in str(w.message)],
            "half_registered": "flakydev" in common.device_op_overrides_dict,
            "cpu": on_cpu, "acc": on_acc,
        }))
        """,
        env={"PYTHONPATH": str(tmp_path)},
    )
    result = last_json(done)
    (warning,) = result["warnings"]
    assert "OSError" in warning and "flaky_backend:register" in warning
    assert not result["half_registered"]
    assert result["cpu"] == [2.0, 2.0] and result["acc"] == [3.0, 3.0]


def test_device_count_that_raises_once_registers_nothing_then_a_retry_works(registry) -> None:
    calls = []

    def device_count() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("driver still loading")
        return 2

    interface = variant(device_count=device_count)
    _drop_acc(registry)
    with pytest.raises(RuntimeError, match="driver still loading.*nothing was registered"):
        registry.register_interface_for_device_PrivateUse1("acc", interface)
    assert _acc_entries(registry) == {}
    registry.register_interface_for_device_PrivateUse1("acc", interface)
    assert _acc_entries(registry) == dict.fromkeys(["acc", "acc:0", "acc:1"], interface)


def test_a_convention_module_that_raises_is_one_warning_then_a_retry_works(registry) -> None:
    import sys
    import types

    name = "torch_acc._dynamo.device_interface"
    good = sys.modules[name]
    broken = types.ModuleType(name)

    def fail(attribute: str) -> object:
        raise RuntimeError("firmware mismatch")

    broken.__getattr__ = fail  # type: ignore[method-assign]
    _drop_acc(registry)
    sys.modules[name] = broken
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            registry._register_privateuse1_interface_by_convention()
        (warning,) = [w for w in caught if name in str(w.message)]
        assert "reading 'DeviceInterface' failed" in str(warning.message)
        assert "firmware mismatch" in str(warning.message)
        assert _acc_entries(registry) == {}
    finally:
        sys.modules[name] = good
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry._register_privateuse1_interface_by_convention()
    assert set(_acc_entries(registry)) == {"acc", "acc:0", "acc:1"}


def test_get_device_properties_that_raises_fails_compile_clearly_and_recovers() -> None:
    from torch_acc.registration import register_inductor_backend

    register_inductor_backend()

    def broken(device: object = None) -> object:
        raise RuntimeError("properties unavailable")

    x = torch.ones(4, device="acc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        register(variant(get_device_properties=broken))
    torch._dynamo.reset()
    with pytest.raises(Exception, match="properties unavailable"):
        torch.compile(lambda t: t.sin() + 1)(x)
    register(variant())
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(lambda t: t.sin() + 1)(x), x.sin() + 1)
