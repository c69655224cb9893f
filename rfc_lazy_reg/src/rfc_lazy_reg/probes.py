"""Conformance probes of slice ``lazy_reg``."""

from __future__ import annotations

import json
import subprocess
import sys

from rfc_shared.conformance.harness import (
    NotApplicable,
    check,
    convention_module,
    subject,
)
from rfc_shared.conformance.probes import probe


@probe("lazy_reg.convention", "the convention module's interface is registered lazily")
def _convention() -> str:
    name = subject().name
    if convention_module() is None:
        raise NotApplicable(
            f"the backend's package has no convention module torch_{name}._dynamo."
            "device_interface: it registers its DeviceInterface itself"
        )
    code = (
        "import json, sys, torch, importlib\n"
        f"importlib.import_module('torch_{name}')\n"
        "light = 'torch._dynamo' not in sys.modules\n"
        "from torch._dynamo.device_interface import get_interface_for_device\n"
        "try:\n"
        f"    found = get_interface_for_device('{name}')\n"
        "    origin = [c.__module__ for c in found.__mro__]\n"
        "except NotImplementedError as e:\n"
        "    origin = str(e)\n"
        "print(json.dumps([light, origin]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    light, origin = json.loads(done.stdout.strip().splitlines()[-1])
    check(light, f"import torch_{name} imported torch._dynamo")
    module = f"torch_{name}._dynamo.device_interface"
    check(isinstance(origin, list) and module in origin, f"first Dynamo lookup: {origin}")
    return f"{module}.DeviceInterface registered on first use; import stays light"
