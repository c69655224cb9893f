# Owner(s): ["module: dynamo"]
"""Tests for the PrivateUse1 entry of the DeviceInterface registry."""

import subprocess
import sys
import textwrap

import torch
import torch._dynamo.device_interface as device_interface
from torch._dynamo.device_interface import (
    DeviceInterface,
    get_interface_for_device,
    get_interface_for_device__PrivateUse1,
    register_interface_for_device,
    register_interface_for_device_PrivateUse1,
)
from torch.testing._internal.common_utils import run_tests, TestCase


class _FakeInterface(DeviceInterface):
    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def device_count() -> int:
        return 2

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def set_device(device: torch.types.Device) -> None:
        pass

    @staticmethod
    def synchronize(device: torch.types.Device = None) -> None:
        pass

    @classmethod
    def get_device_properties(cls, device: torch.types.Device = None) -> None:
        return None


class _OtherFakeInterface(_FakeInterface):
    pass


class TestPrivateUse1DeviceInterface(TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        if torch._C._get_privateuse1_backend_name() == "privateuseone":
            torch.utils.rename_privateuse1_backend("extension_device")
        cls.backend = torch._C._get_privateuse1_backend_name()

    def setUp(self) -> None:
        super().setUp()
        # Populate the built-in entries before taking the snapshot.
        device_interface.get_registered_device_interfaces()
        self._saved = dict(device_interface.device_interfaces)
        for name in list(device_interface.device_interfaces):
            if name.split(":")[0] == self.backend:
                del device_interface.device_interfaces[name]

    def tearDown(self) -> None:
        device_interface.device_interfaces.clear()
        device_interface.device_interfaces.update(self._saved)
        device_interface._invalidate_registry_caches()
        super().tearDown()

    def test_register_name_and_indexed_names(self) -> None:
        register_interface_for_device_PrivateUse1(self.backend, _FakeInterface)
        for name in (self.backend, f"{self.backend}:0", f"{self.backend}:1"):
            self.assertIs(get_interface_for_device(name), _FakeInterface)
        self.assertIs(
            get_interface_for_device(torch.device(self.backend, 1)), _FakeInterface
        )
        self.assertIs(get_interface_for_device(f"{self.backend}:5"), _FakeInterface)
        # Built-in names keep their exact entries.
        with self.assertRaises(NotImplementedError):
            get_interface_for_device("cpu:3")
        self.assertEqual(
            get_interface_for_device__PrivateUse1(), [(self.backend, _FakeInterface)]
        )

    def test_builtin_name_is_rejected(self) -> None:
        before = dict(device_interface.device_interfaces)
        for name in device_interface._BUILTIN_DEVICE_INIT_LIST:
            with self.assertRaisesRegex(ValueError, "built-in device type"):
                register_interface_for_device_PrivateUse1(name, _FakeInterface)
        self.assertEqual(device_interface.device_interfaces, before)

    def test_invalid_interface_is_rejected(self) -> None:
        with self.assertRaisesRegex(TypeError, "must be a subclass"):
            register_interface_for_device_PrivateUse1(self.backend, object)
        with self.assertRaisesRegex(TypeError, "does not implement is_available, device_count"):
            register_interface_for_device_PrivateUse1(
                self.backend, type("Partial", (DeviceInterface,), {})
            )
        self.assertNotIn(self.backend, device_interface.device_interfaces)

    def test_existing_registration_is_not_replaced(self) -> None:
        register_interface_for_device_PrivateUse1(self.backend, _FakeInterface)
        with self.assertRaisesRegex(RuntimeError, "already has the interface"):
            register_interface_for_device_PrivateUse1(self.backend, _OtherFakeInterface)
        self.assertIs(get_interface_for_device(self.backend), _FakeInterface)

    def test_failing_device_count_registers_nothing(self) -> None:
        class Broken(_FakeInterface):
            @staticmethod
            def device_count() -> int:
                raise RuntimeError("driver not loaded")

        with self.assertRaisesRegex(RuntimeError, "device_count"):
            register_interface_for_device_PrivateUse1(self.backend, Broken)
        self.assertNotIn(self.backend, device_interface.device_interfaces)

    def test_registration_clears_dependent_caches(self) -> None:
        calls = []

        def cache_clear() -> None:
            calls.append(None)

        device_interface._register_registry_cache_clear(cache_clear)
        try:
            register_interface_for_device_PrivateUse1(self.backend, _FakeInterface)
            register_interface_for_device("some_device", _FakeInterface)
        finally:
            device_interface._registry_cache_clears.remove(cache_clear)
        self.assertEqual(len(calls), 2)

    def test_registering_before_rename_is_rejected(self) -> None:
        code = textwrap.dedent(
            """
            import torch._dynamo.device_interface as di
            try:
                di.register_interface_for_device_PrivateUse1("foo", di.CpuInterface)
            except RuntimeError as e:
                print(e)
            """
        )
        out = subprocess.check_output([sys.executable, "-c", code], text=True)
        self.assertIn("has not been renamed", out)


if __name__ == "__main__":
    run_tests()
