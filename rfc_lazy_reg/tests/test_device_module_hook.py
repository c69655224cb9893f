"""lazy_reg on acc: its DeviceInterface comes from ``torch.acc.get_device_interface()``
when Dynamo's registry first needs it."""

from __future__ import annotations

import pytest

from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.slice("lazy_reg")


def test_acc_is_found_on_first_use_and_import_stays_light() -> None:
    done = run_python(
        """
        import json, sys, torch, torch_acc
        light = [m for m in ("torch._dynamo", "torch._inductor") if m in sys.modules]
        from torch._dynamo.device_interface import get_interface_for_device
        found = [get_interface_for_device(name) is torch.acc.get_device_interface()
                 for name in ("acc", "acc:1")]
        print(json.dumps([light, found]))
        """
    )
    assert last_json(done) == [[], [True, True]]


def test_the_order_of_backend_import_and_first_dynamo_use_does_not_matter() -> None:
    done = run_python(
        """
        import json, torch
        import torch._inductor.utils as utils  # the registry and GPU_TYPES, before acc
        import torch._dynamo.device_interface as di
        before = "acc" in dict(di.get_registered_device_interfaces())
        import torch_acc  # renamed after the registry was first used
        listed = "acc" in dict(di.get_registered_device_interfaces())
        print(json.dumps([before, listed]))
        """
    )
    # Listed, not yet classified: GPU_TYPES taken before acc existed is
    # rescanned on registration by rfc1, not by this slice.
    assert last_json(done) == [False, True]


def test_an_explicit_registration_of_the_same_interface_agrees() -> None:
    # What the benchmark's backend import did: found through the hook, then
    # registered explicitly by the backend's own code.
    done = run_python(
        """
        import json, warnings, torch, torch_acc
        from torch._dynamo.device_interface import get_interface_for_device
        from torch_acc.registration import register_device_interface
        warnings.simplefilter("error")
        found = get_interface_for_device("acc")
        register_device_interface()
        print(json.dumps(get_interface_for_device("acc") is found))
        """
    )
    assert last_json(done) is True


def test_an_explicit_registration_made_first_wins() -> None:
    done = run_python(
        """
        import json, torch, torch_acc
        hook = torch.acc.get_device_interface
        del torch.acc.get_device_interface  # until acc registered explicitly
        import torch._dynamo.device_interface as di  # the registry is used at import
        explicit = type("Explicit", (hook(),), {})
        di.register_interface_for_device_PrivateUse1("acc", explicit)
        torch.acc.get_device_interface = hook
        print(json.dumps(di.get_interface_for_device("acc:1") is explicit))
        """
    )
    assert last_json(done) is True
