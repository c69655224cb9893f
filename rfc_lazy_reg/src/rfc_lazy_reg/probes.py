"""Conformance probes of slice ``lazy_reg``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from rfc_shared.conformance.harness import NotApplicable, check, subject
from rfc_shared.conformance.probes import probe


@probe(
    "lazy_reg.device_module_hook",
    "the interface torch.<backend>.get_device_interface() gives is registered when first needed",
)
def _device_module_hook() -> str:
    name = subject().name
    if getattr(subject().module, "get_device_interface", None) is None:
        raise NotApplicable(
            f"torch.{name} has no get_device_interface(): the backend registers its "
            "DeviceInterface itself"
        )
    # The package that registered the device module (torch_acc for torch.acc).
    top = subject().module.__name__.split(".")[0]
    code = (
        "import importlib, json, sys, torch\n"
        f"importlib.import_module({top!r})\n"
        "light = 'torch._dynamo' not in sys.modules\n"
        "registry = sys.modules.get('torch._dynamo.device_interface')\n"
        f"itself = registry is not None and {name!r} in registry.device_interfaces\n"
        # What the hook raises where the registry first calls it: inside
        # `import torch._dynamo`, with Inductor's modules half-imported.
        f"hook, raised = torch.{name}.get_device_interface, []\n"
        "def watched():\n"
        "    try:\n"
        "        return hook()\n"
        "    except Exception as e:\n"
        "        raised.append(f'{type(e).__name__}: ' + str(e).split(' (most likely')[0])\n"
        "        raise\n"
        f"torch.{name}.get_device_interface = watched\n"
        "import torch._dynamo\n"
        f"torch.{name}.get_device_interface = hook\n"
        "from torch._dynamo.device_interface import get_interface_for_device\n"
        "try:\n"
        f"    found = get_interface_for_device('{name}')\n"
        f"    same = found is torch.{name}.get_device_interface()\n"
        "except NotImplementedError as e:\n"
        "    same = str(e)\n"
        "print(json.dumps([light, itself, same, raised[:1]]))\n"
    )
    # Autoload off: the question is what importing the backend's package does,
    # not what other packages' entry points register.
    env = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    light, itself, same, raised = json.loads(done.stdout.strip().splitlines()[-1])
    if itself:
        raise NotApplicable(
            f"import {top} registers {name}'s DeviceInterface itself "
            "(register_interface_for_device): there is no first use left to register it on"
        )
    check(light, f"import {top} imported torch._dynamo")
    check(same is True, f"first Dynamo lookup of {name!r}: {same}")
    check(
        not raised,
        f"torch.{name}.get_device_interface() raised {''.join(raised)[:200]} where the "
        "registry first called it, inside `import torch._dynamo`: the registry asks it again "
        f"later, but what it scanned during the import (the GPU types) missed {name}. Import "
        f"only torch._dynamo.device_interface and {top}'s interface module in the hook, and "
        "Inductor's modules in _inductor_backend_init() (backend guide, section 3)",
    )
    return f"torch.{name}.get_device_interface() registered on first use; import stays light"
