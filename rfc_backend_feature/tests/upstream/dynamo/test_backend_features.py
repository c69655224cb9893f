# Owner(s): ["module: dynamo"]
"""BackendFeature as the framework-wide capability set a DeviceInterface
declares."""

import torch
import torch._dynamo.device_interface as device_interface
from torch._dynamo.device_interface import (
    BackendFeature,
    CudaInterface,
    DeviceInterface,
    get_backend_features_for_device,
    MpsInterface,
    MtiaInterface,
    XpuInterface,
)
from torch._refs.fft import _promote_type_fft
from torch.testing._internal.common_utils import run_tests, TestCase


class _FeatureInterface(DeviceInterface):
    features: set = set()

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
    def get_device_properties(cls, device: torch.types.Device = None) -> None:
        return None

    @classmethod
    def backend_features(cls, device: torch.types.Device = None) -> set:
        return set(cls.features)


class TestBackendFeatures(TestCase):
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

    def tearDown(self) -> None:
        device_interface.device_interfaces.clear()
        device_interface.device_interfaces.update(self._saved)
        device_interface._invalidate_registry_caches()
        super().tearDown()

    def _register(self, *features: BackendFeature) -> None:
        interface = type("Fake", (_FeatureInterface,), {"features": set(features)})
        for name in list(device_interface.device_interfaces):
            if name.split(":")[0] == self.device:
                del device_interface.device_interfaces[name]
        device_interface.register_interface_for_device_PrivateUse1(self.device, interface)

    def test_builtin_declarations(self) -> None:
        full = {
            BackendFeature.GPU,
            BackendFeature.ONLINE_SOFTMAX,
            BackendFeature.FP16_FFT,
            BackendFeature.GRAPH_CAPTURE,
        }
        self.assertEqual(CudaInterface.backend_features(), full)
        self.assertEqual(XpuInterface.backend_features(), full)
        self.assertEqual(MtiaInterface.backend_features(), {BackendFeature.GPU})
        self.assertEqual(MpsInterface.backend_features(), {BackendFeature.GPU})
        self.assertEqual(DeviceInterface.backend_features(), set())
        self.assertTrue(CudaInterface.is_gpu())
        self.assertFalse(DeviceInterface.is_gpu())

    def test_is_gpu_derives_from_the_gpu_feature(self) -> None:
        self._register(BackendFeature.GPU)
        self.assertTrue(device_interface.get_interface_for_device(self.device).is_gpu())
        self._register()
        self.assertFalse(device_interface.get_interface_for_device(self.device).is_gpu())

    def test_is_gpu_alone_implies_the_gpu_feature(self) -> None:
        class OnlyIsGpu(DeviceInterface):
            @staticmethod
            def is_gpu() -> bool:
                return True

        self.assertEqual(OnlyIsGpu.backend_features(), {BackendFeature.GPU})

    def test_fp16_fft_follows_the_feature(self) -> None:
        device = torch.device(self.device, 0)
        self._register(BackendFeature.FP16_FFT)
        self.assertEqual(_promote_type_fft(torch.float16, False, device), torch.float16)
        self._register()
        with self.assertRaisesRegex(RuntimeError, "Unsupported dtype"):
            _promote_type_fft(torch.float16, False, device)

    def test_unknown_device_has_no_features(self) -> None:
        self.assertEqual(get_backend_features_for_device("not_a_device"), set())


if __name__ == "__main__":
    run_tests()
