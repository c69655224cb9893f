"""The probe's verdicts on backends shaped unlike acc: each test builds the
shape (a raising method, a missing class, a backend's own registration) out
of a real test backend and checks that the verdict names the backend's gap,
not a false FAIL or ERROR of the probe's own."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rfc_shared.conformance.backend import ENV_BACKEND
from rfc_shared.testing.helpers import run_python


def verdict(probe: str, setup: str, backend: str = "torch_acc", slices: str = "all") -> dict:
    """Runs ``probe`` in a fresh interpreter after ``setup`` (code that may
    replace the harness's view of the backend); its outcome as a dict."""
    code = (
        "import json, torch\n"
        f"import {backend}\n"
        "from rfc_shared.conformance import harness\n"
        "from rfc_shared.conformance.runner import run_probe\n"
        f"{setup}\n"
        f"outcome = run_probe({probe!r})\n"
        "print(json.dumps({'status': outcome.status, 'evidence': outcome.evidence}))\n"
    )
    done = run_python(code, slices=slices, env={"TRITON_INTERPRET": "1", ENV_BACKEND: backend})
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_probe_that_meets_a_missing_api_says_n_a_even_where_it_wraps_errors() -> None:
    setup = (
        "def missing():\n"
        "    raise harness.NotApplicable('the backend has no interface to vary')\n"
        "harness.base_interface = missing\n"
    )
    outcome = verdict("rfc3.kernel_call_guard", setup)
    assert outcome == {"status": "n/a", "evidence": "the backend has no interface to vary"}


def test_the_multi_processor_count_of_a_host_device_whose_properties_raise() -> None:
    # A host-class backend registering its own interface, whose
    # get_device_properties raises: the probe's variant must not inherit it.
    setup = (
        "base = harness.base_interface()\n"
        "def raising(device=None):\n"
        "    raise RuntimeError('sealed has no device properties')\n"
        "own = type('OwnInterface', (base,), {'get_device_properties': staticmethod(raising)})\n"
        "harness.base_interface = lambda: own\n"
    )
    outcome = verdict("rfc1.multi_processor_count", setup, backend="torch_sealed")
    assert outcome["status"] == "pass", outcome


def test_stream_type_is_n_a_where_the_device_module_has_no_stream_class() -> None:
    setup = (
        "import types\n"
        "import rfc3_inductor.probes as probes\n"
        "real = harness.subject()\n"
        "fake = harness.Subject(real.name, types.SimpleNamespace())\n"
        "probes.subject = lambda: fake\n"
    )
    outcome = verdict("rfc3.stream_type", setup)
    assert outcome == {
        "status": "n/a",
        "evidence": "torch.acc has no Stream: no C++ stream type is emitted for it",
    }


def test_the_graph_capture_gate_of_an_interface_with_a_stream_class_only() -> None:
    # Streams, but none of device/current_stream/stream implemented: the
    # variant must bring what a declaration of graph capture requires.
    setup = (
        "base = harness.base_interface()\n"
        "core = ('is_available', 'device_count', 'current_device', 'set_device', 'is_gpu')\n"
        "import inspect\n"
        "slots = {n: inspect.getattr_static(base, n) for n in core}\n"
        "bare = type('StreamsOnly', (harness.registry().DeviceInterface,),\n"
        "            {'Stream': base.Stream, **slots})\n"
        "harness.base_interface = lambda: bare\n"
    )
    outcome = verdict("graph_capture.gate", setup)
    assert outcome["status"] == "pass", outcome


def test_a_wrong_eager_kernel_is_not_blamed_on_the_compile() -> None:
    setup = (
        "import torch\n"
        "from rfc_shared.conformance import compile_report, corpus\n"
        "case = corpus.CASES['mlp']\n"
        "corpus.CASES.clear(); corpus.CASES['mlp'] = case\n"
        "def compile_case(name, backend, device, options=None):\n"
        "    return {'status': 'fail', 'message': 'mismatch', 'site': 'here'}\n"
        "compile_report.compile_case = compile_case\n"
        "real_run = corpus.run\n"
        "def run(case, device_type, compile_options=None):\n"
        "    out = real_run(case, device_type, compile_options)\n"
        "    return [[t + 1 for t in o] for o in out] if device_type != 'cpu' else out\n"
        "corpus.run = run\n"
    )
    outcome = verdict("rfc3.e2e_compile", setup)
    assert outcome["status"] == "n/a", outcome
    assert "the backend's eager kernels are wrong" in outcome["evidence"]
    assert "mlp" in outcome["evidence"]


def test_the_verdicts_hold_for_a_backend_that_registers_its_interface_itself(
    tmp_path: Path,
) -> None:
    # As a backend's compiler module autoloaded by `import torch` does: import
    # Dynamo and register the interface explicitly, in every interpreter.
    probes = [
        "registry_core.register_privateuse1",
        "registry_core.indexed_lookup",
        "rfc1.is_gpu",
        "rfc1.device_need_guard",
        "rfc1.multi_processor_count",
        "rfc2.constant_fold",
        "rfc3.cpp_options",
        "lazy_reg.device_module_hook",
        "backend_feature.gpu",
        "graph_capture.gate",
    ]
    (tmp_path / "sitecustomize.py").write_text(
        "import os\n"
        "if os.environ.get('TORCH_DEVICE_BACKEND_AUTOLOAD', '1') == '1':  # as torch's autoload\n"
        "    import torch, torch_acc, torch._dynamo\n"
        "    from torch._dynamo.device_interface import register_interface_for_device\n"
        "    register_interface_for_device('acc', torch.acc.get_device_interface())\n"
    )

    def statuses(pythonpath: str) -> dict[str, str]:
        code = (
            "import json, torch, torch_acc\n"
            "from rfc_shared.conformance.runner import run_probe\n"
            f"print(json.dumps({{p: run_probe(p).status for p in {probes!r}}}))\n"
        )
        env = {"TRITON_INTERPRET": "1", ENV_BACKEND: "torch_acc", "PYTHONPATH": pythonpath}
        done = run_python(code, slices="all", env=env)
        return json.loads(done.stdout.strip().splitlines()[-1])

    pythonpath = os.environ.get("PYTHONPATH", "")
    lazy = statuses(pythonpath)
    assert set(lazy.values()) == {"pass"}, lazy
    assert statuses(f"{tmp_path}{os.pathsep}{pythonpath}") == lazy
