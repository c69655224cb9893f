# Owner(s): ["module: dynamo"]
"""A PrivateUse1 backend's DeviceInterface is found by convention in
torch_<backend>._dynamo.device_interface on the registry's first use."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from torch.testing._internal.common_utils import run_tests, TestCase


INTERFACE = textwrap.dedent(
    """
    class DeviceInterface:
        @staticmethod
        def is_available():
            return True

        @staticmethod
        def device_count():
            return 1

        @staticmethod
        def current_device():
            return 0

        @staticmethod
        def set_device(device):
            pass

        @staticmethod
        def synchronize(device=None):
            pass

        @staticmethod
        def get_device_properties(device=None):
            return None
    """
)

PROBE = textwrap.dedent(
    """
    import json, sys, warnings
    import torch
    import torch_conventiontest
    light = "torch._dynamo" not in sys.modules
    import torch._dynamo.device_interface as di
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = sorted(n for n, _ in di.get_registered_device_interfaces()
                       if n.startswith("conventiontest"))
    print(json.dumps([light, names, [str(w.message) for w in caught]]))
    """
)


class TestDeviceInterfaceConvention(TestCase):
    def _run(self, convention_source: str | None) -> list:
        with tempfile.TemporaryDirectory() as root:
            package = Path(root) / "torch_conventiontest"
            package.mkdir()
            (package / "__init__.py").write_text(
                "import torch\ntorch.utils.rename_privateuse1_backend('conventiontest')\n"
            )
            if convention_source is not None:
                (package / "_dynamo").mkdir()
                (package / "_dynamo" / "__init__.py").write_text("")
                (package / "_dynamo" / "device_interface.py").write_text(convention_source)
            env = {**os.environ, "PYTHONPATH": root}
            out = subprocess.check_output([sys.executable, "-c", PROBE], env=env, text=True)
        return json.loads(out.strip().splitlines()[-1])

    def test_registered_on_first_use_without_importing_dynamo(self) -> None:
        light, names, warned = self._run(INTERFACE)
        self.assertTrue(light)
        self.assertEqual(names, ["conventiontest", "conventiontest:0"])
        self.assertEqual(warned, [])

    def test_invalid_interface_warns_and_a_missing_module_is_silent(self) -> None:
        _, names, warned = self._run("DeviceInterface = 'not a class'\n")
        self.assertEqual(names, [])
        self.assertEqual(len(warned), 1)
        self.assertIn("torch_conventiontest._dynamo.device_interface", warned[0])
        self.assertIn("not a class", warned[0])
        _, names, warned = self._run(None)
        self.assertEqual((names, warned), ([], []))

if __name__ == "__main__":
    run_tests()
