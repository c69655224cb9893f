"""The registry core (the ``registry_core`` slice's patch) on a renamed
PrivateUse1 backend. Every bad input must error and leave the registry as it
was."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import torch

from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.slice("registry_core")


def di():
    import torch._dynamo.device_interface as device_interface

    return device_interface


def make_interface(count: int = 2, **overrides: Callable[..., object]) -> type:
    base = di().DeviceInterface
    methods = {
        "is_available": staticmethod(lambda: True),
        "device_count": staticmethod(lambda: count),
        "current_device": staticmethod(lambda: 0),
        "set_device": staticmethod(lambda device: None),
        "synchronize": staticmethod(lambda device=None: None),
        "get_device_properties": classmethod(lambda cls, device=None: None),
        **{k: staticmethod(v) for k, v in overrides.items()},
    }
    return type("AccTestInterface", (base,), methods)


@pytest.fixture(autouse=True)
def _backend_without_interface(privateuse1_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Start from a backend with no registered interface, and none to find
    (where lazy_reg is applied, the registry asks the device module for it)."""
    monkeypatch.delattr(getattr(torch, privateuse1_backend), "get_device_interface", raising=False)
    module = di()
    module.get_registered_device_interfaces()
    for name in [n for n in module.device_interfaces if n.split(":")[0] == privateuse1_backend]:
        del module.device_interfaces[name]
    module._clear_registry_caches()


def registry() -> dict[str, type]:
    module = di()
    module.get_registered_device_interfaces()  # built-ins registered first
    return dict(module.device_interfaces)


def test_registers_the_name_and_resolves_indexed_names(privateuse1_backend: str) -> None:
    iface = make_interface(count=2)
    di().register_interface_for_device_PrivateUse1(privateuse1_backend, iface)
    assert [k for k in di().device_interfaces if k.startswith(privateuse1_backend)] == [
        privateuse1_backend
    ]
    lookup = di().get_interface_for_device
    for key in (privateuse1_backend, f"{privateuse1_backend}:0", f"{privateuse1_backend}:7"):
        assert lookup(key) is iface
    assert lookup(torch.device(privateuse1_backend, 1)) is iface
    # One mechanism for every device: a string resolves as its torch.device does.
    assert lookup("cpu:3") is lookup(torch.device("cpu", 3)) is lookup("cpu")


def test_registered_interfaces_are_a_snapshot(privateuse1_backend: str) -> None:
    iface = make_interface()
    before = di().get_registered_device_interfaces()
    assert isinstance(before, tuple)
    # A registration while a caller iterates leaves its loop and its tuple alone.
    for _ in di().get_registered_device_interfaces():
        di().register_interface_for_device_PrivateUse1(privateuse1_backend, iface)
    assert (privateuse1_backend, iface) not in before
    assert (privateuse1_backend, iface) in di().get_registered_device_interfaces()
    # A change made to the dict in place is listed once the caches are cleared.
    del di().device_interfaces[privateuse1_backend]
    di()._clear_registry_caches()
    assert (privateuse1_backend, iface) not in di().get_registered_device_interfaces()


@pytest.mark.parametrize("name", ["cuda", "cpu", "mps:0", "meta", "mtia"])
def test_a_builtin_name_is_refused(privateuse1_backend: str, name: str) -> None:
    before = registry()
    with pytest.raises(ValueError, match="is a built-in device type"):
        di().register_interface_for_device_PrivateUse1(name, make_interface())
    assert registry() == before


def test_a_name_that_is_not_the_backend_is_refused(privateuse1_backend: str) -> None:
    before = registry()
    with pytest.raises(ValueError, match=f"which is named '{privateuse1_backend}'"):
        di().register_interface_for_device_PrivateUse1("npu", make_interface())
    assert registry() == before


@pytest.mark.parametrize("bad", [object(), int, "AccInterface", None])
def test_a_non_interface_is_refused(privateuse1_backend: str, bad: object) -> None:
    before = registry()
    with pytest.raises(TypeError, match="must be a subclass of"):
        di().register_interface_for_device_PrivateUse1(privateuse1_backend, bad)
    assert registry() == before


def test_missing_required_methods_are_named(privateuse1_backend: str) -> None:
    partial = type("Partial", (di().DeviceInterface,), {"is_available": staticmethod(lambda: True)})
    before = registry()
    with pytest.raises(TypeError) as info:
        di().register_interface_for_device_PrivateUse1(privateuse1_backend, partial)
    assert "does not implement device_count, current_device, set_device," in str(info.value)
    assert registry() == before


def test_device_properties_are_required_of_a_gpu_class_interface(
    privateuse1_backend: str,
) -> None:
    host = make_interface()
    del host.get_device_properties
    gpu = type("Gpu", (host,), {"is_gpu": staticmethod(lambda: True)})
    with pytest.raises(TypeError, match="does not implement get_device_properties"):
        di().register_interface_for_device_PrivateUse1(privateuse1_backend, gpu)
    di().register_interface_for_device_PrivateUse1(privateuse1_backend, host)
    assert di().get_interface_for_device(privateuse1_backend) is host


def test_properties_through_the_worker_count_as_implemented(privateuse1_backend: str) -> None:
    iface = make_interface(is_gpu=lambda: True)
    del iface.get_device_properties

    class Worker(di().DeviceInterface.Worker):
        @staticmethod
        def get_device_properties(device: object = None) -> None:
            return None

    iface.Worker = Worker
    di().register_interface_for_device_PrivateUse1(privateuse1_backend, iface)
    assert di().get_interface_for_device(privateuse1_backend) is iface


def test_a_taken_name_is_never_overwritten(privateuse1_backend: str) -> None:
    first, second = make_interface(), make_interface()
    di().register_interface_for_device_PrivateUse1(privateuse1_backend, first)
    di().register_interface_for_device_PrivateUse1(privateuse1_backend, first)  # no-op
    before = registry()
    with pytest.raises(RuntimeError, match="already has the interface"):
        di().register_interface_for_device_PrivateUse1(privateuse1_backend, second)
    assert registry() == before


def test_registration_does_not_touch_the_device(privateuse1_backend: str) -> None:
    def untouchable(*args: object) -> object:
        raise AssertionError("registration called into the device runtime")

    iface = make_interface(
        device_count=untouchable, current_device=untouchable, is_available=untouchable
    )
    di().register_interface_for_device_PrivateUse1(privateuse1_backend, iface)
    assert di().get_interface_for_device(f"{privateuse1_backend}:1") is iface


def test_answers_derived_from_the_registry_follow_a_registration(
    privateuse1_backend: str,
) -> None:
    # Upstream's functools caches stay (with cache_clear): a registration clears them.
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    stream = type("AccTestStream", (torch.Stream,), {})
    assert stream not in UserDefinedClassVariable._in_graph_classes()
    iface = type("WithStream", (make_interface(),), {"Stream": stream})
    di().register_interface_for_device_PrivateUse1(privateuse1_backend, iface)
    assert stream in UserDefinedClassVariable._in_graph_classes()
    assert hasattr(UserDefinedClassVariable._in_graph_classes, "cache_clear")


def test_registering_before_the_rename_is_refused() -> None:
    done = run_python(
        """
        import json
        import torch._dynamo.device_interface as di
        before = dict(di.device_interfaces)
        try:
            di.register_interface_for_device_PrivateUse1("acc", di.CpuInterface)
        except RuntimeError as e:
            print(json.dumps([str(e), dict(di.device_interfaces) == before]))
        """
    )
    message, unchanged = last_json(done)
    assert "has not been renamed" in message and unchanged


def test_builtins_are_registered_as_on_stock_torch() -> None:
    code = """
        import json
        import torch._dynamo.device_interface as di
        print(json.dumps(sorted((k, v.__name__) for k, v in di.get_registered_device_interfaces())))
    """
    stock = last_json(run_python(code, slices="none"))
    overlaid = last_json(run_python(code))
    assert overlaid == stock
    assert (
        "register_interface_for_device_PrivateUse1"
        in run_python("import torch._dynamo.device_interface as di; print(dir(di))").stdout
    )


def test_concurrent_registration_and_lookup_stay_consistent(privateuse1_backend: str) -> None:
    iface = make_interface(count=2)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def register() -> None:
        barrier.wait()
        for _ in range(50):
            di().register_interface_for_device_PrivateUse1(privateuse1_backend, iface)

    def legacy(n: int) -> None:
        barrier.wait()
        for i in range(50):
            di().register_interface_for_device(f"thread{n}_{i}", iface)

    def look() -> None:
        barrier.wait()
        for _ in range(200):
            names = [name for name, _ in di().get_registered_device_interfaces()]
            assert "cpu" in names

    def guarded(fn: Callable[..., None], *args: object) -> Callable[[], None]:
        def run() -> None:
            try:
                fn(*args)
            except BaseException as e:
                errors.append(e)

        return run

    threads = [threading.Thread(target=guarded(register)) for _ in range(3)]
    threads += [threading.Thread(target=guarded(legacy, n)) for n in range(2)]
    threads += [threading.Thread(target=guarded(look)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert di().get_interface_for_device(f"{privateuse1_backend}:1") is iface
    assert len([n for n in di().device_interfaces if n.startswith("thread")]) == 100
