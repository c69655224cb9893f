# Owner(s): ["module: inductor"]
"""Registration interfaces for out-of-tree Inductor backends: the
DeviceOpOverrides contract, namespaced compile options, and DeviceInterface
runtime methods."""

import importlib
import sys
import tempfile
from pathlib import Path

import torch
import torch._dynamo.device_interface as device_interface
from torch._inductor.codegen import common
from torch._inductor.codegen.cpp_utils import device_to_aten
from torch._inductor.codegen.wrapper import PythonWrapperCodegen
from torch.testing._internal.common_utils import run_tests, TestCase


class TestOutOfTreeBackendRegistration(TestCase):
    def test_device_op_overrides_defaults(self) -> None:
        overrides = common.DeviceOpOverrides()
        self.assertEqual(overrides.aten_device_type(), "at::kPrivateUse1")
        self.assertEqual(overrides.cpp_stream_type(), "void*")
        self.assertEqual(overrides.get_cpp_torch_device_options(), ([], [], [], [], [], []))
        self.assertFalse(overrides.uses_gpu_cpp_wrapper())
        self.assertIsNone(overrides.import_empty_strided_as("empty_strided_foo"))

    def test_builtin_aten_device_types(self) -> None:
        for device, aten in {
            "cpu": "at::kCPU",
            "cuda": "at::kCUDA",
            "xpu": "at::kXPU",
            "mps": "at::kMPS",
            "meta": "at::kMeta",
        }.items():
            self.assertEqual(device_to_aten(device), aten)
        self.assertTrue(common.uses_gpu_cpp_wrapper("cuda"))
        self.assertFalse(common.uses_gpu_cpp_wrapper("cpu"))

    def test_unknown_device_says_how_to_register(self) -> None:
        with self.assertRaisesRegex(KeyError, "register_device_op_overrides"):
            common.get_device_op_overrides("not_a_device")

    def test_visible_devices_env(self) -> None:
        self.assertIsNone(device_interface.DeviceInterface.visible_devices_env())
        self.assertEqual(
            device_interface.CudaInterface.visible_devices_env(), "CUDA_VISIBLE_DEVICES"
        )
        self.assertIsNone(device_interface.DeviceInterface.get_cache_system_info())

    def test_namespaced_options_reach_the_device_config(self) -> None:
        device = "fake_options_device"
        with tempfile.TemporaryDirectory() as root:
            Path(root, "fake_device_config.py").write_text(
                "import sys\n"
                "from torch.utils._config_module import install_config_module\n"
                "flag: bool = False\n"
                "install_config_module(sys.modules[__name__])\n"
            )
            sys.path.insert(0, root)
            try:
                config = importlib.import_module("fake_device_config")
            finally:
                sys.path.remove(root)
        common.register_backend_for_device(
            device, lambda scheduler: None, PythonWrapperCodegen, device_custom_config=config
        )
        try:
            wrapper = torch._TorchCompileInductorWrapper(None, {f"{device}.flag": True}, False)
            self.assertEqual(wrapper.device_config, {device: {"flag": True}})
            with self.assertRaisesRegex(RuntimeError, r"the options of device .* are \['flag'\]"):
                torch._TorchCompileInductorWrapper(None, {f"{device}.nope": 1}, False)
        finally:
            common.device_codegens.pop(device, None)
            common.custom_backend_codegen_configs.pop(device, None)
            common.custom_backend_passes.pop(device, None)
            sys.modules.pop("fake_device_config", None)

if __name__ == "__main__":
    run_tests()
