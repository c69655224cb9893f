# Owner(s): ["module: inductor"]
"""Inductor's device identity (is_gpu, GPU_TYPES, get_gpu_type, has_triton,
device_need_guard, multiprocessor count) comes from the DeviceInterface
registry."""

import subprocess
import sys
import textwrap
import unittest
from types import SimpleNamespace

import torch
import torch._dynamo.device_interface as device_interface
from torch._dynamo.device_interface import (
    DeviceInterface,
    MtiaInterface,
    register_interface_for_device,
    XpuInterface,
)
from torch._inductor import utils as inductor_utils
from torch._inductor.runtime.hints import DeviceProperties
from torch.testing._internal.common_utils import run_tests, TestCase
from torch.utils._triton import has_triton, has_triton_package


class _FakeGpuInterface(DeviceInterface):
    class Stream(torch.Stream):
        pass

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def device_count() -> int:
        return 1

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
    def get_device_properties(cls, device: torch.types.Device = None) -> SimpleNamespace:
        return SimpleNamespace(multi_processor_count=4)

    @staticmethod
    def get_compute_capability(device: torch.types.Device = None) -> int:
        return 0

    @staticmethod
    def is_gpu() -> bool:
        return True


class _FakeHostInterface(_FakeGpuInterface):
    @staticmethod
    def is_gpu() -> bool:
        return False


class _FakeStreamlessGpuInterface(_FakeGpuInterface):
    Stream = DeviceInterface.Stream


class TestDeviceIdentityRegistry(TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        if torch._C._get_privateuse1_backend_name() == "privateuseone":
            torch.utils.rename_privateuse1_backend("extension_device")
        cls.device = torch._C._get_privateuse1_backend_name()

    def setUp(self) -> None:
        super().setUp()
        device_interface.get_registered_device_interfaces()
        self._saved = dict(device_interface.device_interfaces)
        for name in list(device_interface.device_interfaces):
            if name.split(":")[0] == self.device:
                del device_interface.device_interfaces[name]
        device_interface._invalidate_registry_caches()

    def tearDown(self) -> None:
        device_interface.device_interfaces.clear()
        device_interface.device_interfaces.update(self._saved)
        device_interface._invalidate_registry_caches()
        super().tearDown()

    def _register(self, interface: type) -> None:
        for name in list(device_interface.device_interfaces):
            if name.split(":")[0] == self.device:
                del device_interface.device_interfaces[name]
        device_interface.register_interface_for_device_PrivateUse1(self.device, interface)

    def test_is_gpu_follows_the_interface(self) -> None:
        self._register(_FakeGpuInterface)
        self.assertTrue(inductor_utils.is_gpu(self.device))
        self.assertIn(self.device, inductor_utils.GPU_TYPES)
        self._register(_FakeHostInterface)
        self.assertFalse(inductor_utils.is_gpu(self.device))
        self.assertNotIn(self.device, inductor_utils.GPU_TYPES)

    def test_builtin_gpu_types(self) -> None:
        for name in ("cuda", "xpu", "mtia", "mps"):
            self.assertTrue(inductor_utils.is_gpu(name), name)
        for name in ("cpu", "tpu", "meta", "cuda:0", None):
            self.assertFalse(inductor_utils.is_gpu(name), name)
        self.assertFalse(inductor_utils.device_need_guard("mps"))
        self.assertTrue(inductor_utils.device_need_guard("cuda"))

    def test_device_need_guard_requires_a_stream_class(self) -> None:
        self._register(_FakeGpuInterface)
        self.assertTrue(inductor_utils.device_need_guard(self.device))
        self._register(_FakeStreamlessGpuInterface)
        self.assertFalse(inductor_utils.device_need_guard(self.device))

    def test_get_gpu_type_prefers_privateuse1_among_available_gpus(self) -> None:
        self._register(_FakeGpuInterface)
        register_interface_for_device("second_fake_gpu", _FakeGpuInterface)
        self.assertEqual(inductor_utils.get_gpu_type(), self.device)

    def test_gpu_types_append_is_deprecated_but_honoured(self) -> None:
        with self.assertWarnsRegex(FutureWarning, "deprecated"):
            inductor_utils.GPU_TYPES.append("legacy_gpu")
        try:
            self.assertTrue(inductor_utils.is_gpu("legacy_gpu"))
        finally:
            inductor_utils.GPU_TYPES.remove("legacy_gpu")
        self.assertFalse(inductor_utils.is_gpu("legacy_gpu"))

    def test_multi_processor_count_comes_from_the_interface(self) -> None:
        class Custom(_FakeGpuInterface):
            @classmethod
            def get_multi_processor_count(cls, device: torch.types.Device = None) -> int:
                return 11

        self._register(Custom)
        props = DeviceProperties.create(torch.device(self.device, 0))
        self.assertEqual(props.multi_processor_count, 11)

    def test_xpu_and_mtia_prefer_the_real_field(self) -> None:
        def with_props(base: type, **fields: int) -> type:
            props = SimpleNamespace(**fields)
            return type(
                "Fake", (base,), {"get_device_properties": classmethod(lambda cls, d=None: props)}
            )

        xpu = with_props(XpuInterface, gpu_subslice_count=5)
        self.assertEqual(xpu.get_multi_processor_count(), 5)
        self.assertEqual(
            with_props(XpuInterface, gpu_subslice_count=5, multi_processor_count=7)
            .get_multi_processor_count(),
            7,
        )
        self.assertEqual(with_props(MtiaInterface).get_multi_processor_count(), 64)
        self.assertEqual(
            with_props(MtiaInterface, multi_processor_count=9).get_multi_processor_count(), 9
        )

    @unittest.skipIf(not has_triton_package(), "needs the triton package")
    def test_has_triton_asks_is_triton_capable(self) -> None:
        class Capable(_FakeGpuInterface):
            @staticmethod
            def is_triton_capable(device: torch.types.Device = None) -> bool:
                return True

            @classmethod
            def raise_if_triton_unavailable(cls, device: torch.types.Device = None) -> None:
                pass

        self._register(Capable)
        self.assertTrue(has_triton())

    def test_importing_inductor_utils_initializes_no_device_runtime(self) -> None:
        code = textwrap.dedent(
            """
            import torch._inductor.utils
            import torch._dynamo.device_interface as di
            print(di._device_initialized)
            """
        )
        out = subprocess.check_output([sys.executable, "-c", code], text=True)
        self.assertEqual(out.strip().splitlines()[-1], "False")


if __name__ == "__main__":
    run_tests()
