"""lazy_reg: a backend's DeviceInterface found by convention, on first use."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.slice("lazy_reg")


def test_acc_is_found_on_first_use_and_import_stays_light() -> None:
    done = run_python(
        """
        import json, sys, torch, torch_acc
        light = [m for m in ("torch._dynamo", "torch._inductor") if m in sys.modules]
        from torch._dynamo.device_interface import get_interface_for_device
        found = {name: [c.__module__ for c in get_interface_for_device(name).__mro__][:3]
                 for name in ("acc", "acc:1")}
        print(json.dumps([light, found]))
        """
    )
    light, found = last_json(done)
    assert light == []
    expected = ["torch_acc._dynamo.device_interface"] * 2 + ["torch._dynamo.device_interface"]
    assert found == {"acc": expected, "acc:1": expected}


def test_the_order_of_backend_import_and_first_dynamo_use_does_not_matter() -> None:
    done = run_python(
        """
        import json, torch
        import torch._dynamo.device_interface as di
        before = "acc" in dict(di.get_registered_device_interfaces())
        import torch_acc  # renamed after the registry was initialized
        after = di.get_interface_for_device("acc").__module__
        print(json.dumps([before, after]))
        """
    )
    assert last_json(done) == [False, "torch_acc._dynamo.device_interface"]


def test_an_explicit_registration_wins(privateuse1_backend: str) -> None:
    import warnings

    import torch._dynamo.device_interface as di

    from torch_acc.registration import device_interface

    di.get_registered_device_interfaces()
    for name in [n for n in di.device_interfaces if n.split(":")[0] == privateuse1_backend]:
        del di.device_interfaces[name]
    explicit = type("Explicit", (device_interface(),), {})
    di.register_interface_for_device_PrivateUse1(privateuse1_backend, explicit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        di._register_privateuse1_interface_by_convention()
    assert di.get_interface_for_device(privateuse1_backend) is explicit


# A fake backend "convdev" whose convention module each case rewrites.
CASES = {
    "missing": None,
    "import_error": "import no_such_module_anywhere\n",
    "raises": "raise RuntimeError('driver not loaded')\n",
    "no_attribute": "X = 1\n",
    "not_a_class": "DeviceInterface = 42\n",
    "methods_missing": (
        "class DeviceInterface:\n    @staticmethod\n    def is_available():\n        return True\n"
    ),
    "device_count_raises": "",  # filled below: registering calls nothing on the interface
    "good": "",
}
GOOD = textwrap.dedent(
    """
    class DeviceInterface:
        @staticmethod
        def is_available():
            return True

        @staticmethod
        def device_count():
            return COUNT

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

        @staticmethod
        def is_gpu():
            return True
    """
)
CASES["device_count_raises"] = GOOD.replace("return COUNT", "raise RuntimeError('no devices yet')")
CASES["good"] = GOOD.replace("COUNT", "2")

DRIVER = """
import importlib, json, shutil, sys, warnings
from pathlib import Path
import torch
torch.utils.rename_privateuse1_backend("convdev")
import torch._dynamo.device_interface as di

if not hasattr(di, "_convention_backend"):
    raise SystemExit("lazy registration is not applied")
root = Path(sys.argv[1])
sys.path.insert(0, str(root))
results = {}
for case, source in json.loads(Path(sys.argv[2]).read_text()).items():
    shutil.rmtree(root / "torch_convdev", ignore_errors=True)
    for name in [m for m in sys.modules if m.startswith("torch_convdev")]:
        del sys.modules[name]
    if source is not None:
        package = root / "torch_convdev" / "_dynamo"
        package.mkdir(parents=True)
        (root / "torch_convdev" / "__init__.py").write_text("")
        (package / "__init__.py").write_text("")
        (package / "device_interface.py").write_text(source)
    importlib.invalidate_caches()
    di.get_registered_device_interfaces()
    before = sorted(di.device_interfaces)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        di._convention_backend = None  # look for the module again
        di.get_registered_device_interfaces()
    after = sorted(di.device_interfaces)
    registered = [n for n in after if n.startswith("convdev")]
    for name in registered:
        del di.device_interfaces[name]
    results[case] = {
        "warnings": [str(w.message) for w in caught],
        "warned_at": sorted({Path(w.filename).name for w in caught}),
        "unchanged": before == after,
        "registered": registered,
    }
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("convention")
    cases = root / "cases.json"
    cases.write_text(json.dumps(CASES))
    script = root / "driver.py"
    script.write_text(DRIVER)
    done = run_python(
        f"import sys; sys.argv = ['driver', {str(root)!r}, {str(cases)!r}]\n"
        f"exec(compile(open({str(script)!r}).read(), {str(script)!r}, 'exec'))"
    )
    return last_json(done)


def test_a_backend_without_the_module_is_skipped_silently(outcomes: dict) -> None:
    assert outcomes["missing"] == {
        "warnings": [],
        "warned_at": [],
        "unchanged": True,
        "registered": [],
    }


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ("import_error", "importing it failed: ModuleNotFoundError"),
        ("raises", "importing it failed: RuntimeError('driver not loaded')"),
        ("no_attribute", "the module defines no 'DeviceInterface'"),
        ("not_a_class", "'DeviceInterface' is a int, not a class"),
        ("methods_missing", "does not implement device_count, current_device, set_device"),
    ],
)
def test_each_failure_is_one_warning_at_the_lookup_and_leaves_the_registry_unchanged(
    outcomes: dict, case: str, problem: str
) -> None:
    result = outcomes[case]
    assert result["unchanged"] and result["registered"] == []
    (warning,) = result["warnings"]
    assert "torch_convdev._dynamo.device_interface" in warning
    assert problem in warning
    assert result["warned_at"] == ["driver.py"]  # the lookup, not device_interface.py


@pytest.mark.parametrize("case", ["good", "device_count_raises"])
def test_a_good_module_registers_the_name_without_touching_the_device(
    outcomes: dict, case: str
) -> None:
    result = outcomes[case]
    assert result["warnings"] == []
    assert result["registered"] == ["convdev"]  # "convdev:1" resolves by device type


def test_the_interfaces_defaults_fill_what_the_module_leaves_out(
    tmp_path: Path,
) -> None:
    package = tmp_path / "torch_convdev" / "_dynamo"
    package.mkdir(parents=True)
    (tmp_path / "torch_convdev" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "device_interface.py").write_text(CASES["good"])
    done = run_python(
        """
        import json, torch
        torch.utils.rename_privateuse1_backend("convdev")
        import torch._dynamo.device_interface as di
        interface = di.get_interface_for_device("convdev")
        print(json.dumps([interface.is_gpu(), interface.is_triton_capable(),
                          issubclass(interface, di.DeviceInterface)]))
        """,
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert last_json(done) == [True, False, True]
