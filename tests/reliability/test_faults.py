"""Faults in a backend's code: compile goes on without the backend or fails
with a clear message, nothing is half-registered, and a retry works."""

from __future__ import annotations

import warnings

import pytest
import torch

from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.helpers import last_json, run_python


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


def test_a_backend_init_that_raises_fails_the_compile_that_ran_it_then_a_retry_works() -> None:
    # The vendor hook half-registers, then fails (a compiler library that does
    # not load). As #192896 decided, the hook runs at the first compile while
    # acc is unregistered, a CPU one included, and its error propagates; acc
    # has no scheduling yet, so the next compile runs the hook again.
    done = run_python(
        """
        import json, torch, torch_acc
        from torch._inductor.codegen import common
        from torch._inductor.codegen.cpu_device_op_overrides import CpuDeviceOpOverrides
        from torch_acc.registration import register_inductor_backend

        calls = []

        def flaky():
            calls.append(1)
            if len(calls) == 1:
                common.register_device_op_overrides("acc", CpuDeviceOpOverrides())
                raise OSError("libacc_compiler.so: cannot open shared object file")
            register_inductor_backend()

        torch.acc._inductor_backend_init = flaky
        try:
            torch.compile(lambda x: x + 1)(torch.ones(2))
            failed = None
        except Exception as e:
            failed = str(e)
        torch._dynamo.reset()
        on_cpu = torch.compile(lambda x: x + 1)(torch.ones(2)).tolist()
        on_acc = torch.compile(lambda x: x * 3)(torch.ones(2, device="acc")).cpu().tolist()
        print(json.dumps({"failed": failed, "cpu": on_cpu, "acc": on_acc, "calls": len(calls)}))
        """,
    )
    result = last_json(done)
    assert "libacc_compiler.so" in result["failed"]
    assert result["cpu"] == [2.0, 2.0] and result["acc"] == [3.0, 3.0]
    assert result["calls"] == 2


def test_registering_an_interface_calls_nothing_on_it(registry) -> None:
    # A backend registers at import, possibly before its driver is up: the
    # registry must not call the interface (it would initialize the device, or
    # fail while the driver is still loading).
    def not_yet(*args: object, **kwargs: object) -> object:
        raise RuntimeError("driver still loading")

    interface = variant(
        is_available=not_yet,
        device_count=not_yet,
        current_device=not_yet,
        set_device=not_yet,
        get_device_properties=not_yet,
    )
    _drop_acc(registry)
    registry.register_interface_for_device_PrivateUse1("acc", interface)
    assert registry.get_interface_for_device("acc:1") is interface
    assert _acc_entries(registry) == {"acc": interface}


def test_a_device_module_hook_that_raises_is_one_warning_then_a_retry_works(registry) -> None:
    good = torch.acc.get_device_interface

    def fail() -> type:
        raise RuntimeError("firmware mismatch")

    _drop_acc(registry)
    torch.acc.get_device_interface = fail
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # The edit in place above is a change of the registry: derived
            # answers follow it, and the hook is asked.
            registry._clear_registry_caches()
            registry.get_registered_device_interfaces()
        (warning,) = [w for w in caught if "get_device_interface" in str(w.message)]
        assert "firmware mismatch" in str(warning.message)
        assert _acc_entries(registry) == {}
    finally:
        torch.acc.get_device_interface = good
    # The failed answer stands until the registry changes (the hook is not
    # asked, and does not warn, on every enumeration); then it is asked again.
    registry._clear_registry_caches()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry.get_registered_device_interfaces()  # asked again: now it works
    assert set(_acc_entries(registry)) == {"acc"}  # indexed names resolve by type


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
