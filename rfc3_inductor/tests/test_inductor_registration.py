"""rfc3 on acc: discovery, options, the DeviceOpOverrides and DeviceInterface
contracts, and the wrapper decisions, all through registration only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.corpus import CORPUS, assert_same, run
from rfc_shared.testing.helpers import last_json, run_python, write_distribution


pytestmark = pytest.mark.slice("rfc3")


@pytest.fixture(autouse=True)
def _acc_interface_registered(privateuse1_backend: str) -> None:
    # The entry point registers acc's interface once per process; the registry
    # restore between tests would otherwise take it away from later tests.
    from torch_acc.registration import ensure_device_interface

    ensure_device_interface()


@pytest.fixture
def common():
    import torch._inductor.codegen.common as common

    common.init_backend_registration()
    return common


def test_acc_is_discovered_through_its_entry_point_alone() -> None:
    done = run_python(
        """
        import json, torch, torch_acc
        from torch._inductor.codegen import common
        before = common.get_scheduling_for_device("acc")
        common.init_backend_registration()
        common.init_backend_registration()
        print(json.dumps([before is None, common.get_scheduling_for_device("acc").__name__,
                          common._init_entry_point_backends.cache_info().misses]))
        """
    )
    assert last_json(done) == [True, "InterpretedTritonScheduling", 1]


def test_a_failing_plugin_is_a_warning_and_registers_nothing(tmp_path: Path) -> None:
    write_distribution(
        tmp_path,
        "broken-backend",
        "[torch_inductor_backends]\nbrokendev = broken_backend:register\n",
        {
            "broken_backend.py": """
            from torch._inductor.codegen.common import register_device_op_overrides
            from torch._inductor.codegen.cpu_device_op_overrides import CpuDeviceOpOverrides

            def register():
                register_device_op_overrides("brokendev", CpuDeviceOpOverrides())
                raise RuntimeError("driver missing")
            """
        },
    )
    done = run_python(
        """
        import json, warnings, torch
        from torch._inductor.codegen import common
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            common.init_backend_registration()
        out = torch.compile(lambda x: x + 1)(torch.ones(2))
        print(json.dumps([[str(w.message) for w in caught if "brokendev" in str(w.message)],
                          "brokendev" in common.device_op_overrides_dict, out.tolist()]))
        """,
        env={"PYTHONPATH": str(tmp_path)},
    )
    (warning,), half_registered, out = last_json(done)
    assert "'brokendev'" in warning and "broken_backend:register" in warning
    assert "RuntimeError('driver missing')" in warning
    assert not half_registered and out == [2.0, 2.0]


def test_an_existing_registration_is_never_replaced() -> None:
    done = run_python(
        """
        import json, torch, torch_acc
        from torch._inductor.codegen import common
        from torch._inductor.codegen.cpp import CppScheduling
        from torch._inductor.codegen.wrapper import PythonWrapperCodegen
        common.register_backend_for_device("acc", CppScheduling, PythonWrapperCodegen)
        common.init_backend_registration()
        try:
            common.get_device_op_overrides("acc")  # acc's plugin would have registered them
            skipped = "not skipped"
        except KeyError as e:
            skipped = str(e)
        print(json.dumps([common.get_scheduling_for_device("acc").__name__, skipped]))
        """
    )
    scheduling, skipped = last_json(done)
    assert scheduling == "CppScheduling"
    assert "No DeviceOpOverrides registered for device 'acc'" in skipped


def test_privateuse1_module_attributes_are_found_after_a_late_rename() -> None:
    done = run_python(
        """
        import json, warnings, torch
        from torch._inductor.codegen import common
        from torch._inductor.codegen.cpp import CppScheduling
        from torch._inductor.codegen.wrapper import PythonWrapperCodegen
        from torch.utils.backend_registration import _setup_privateuseone_for_python_backend
        # Before the rename (entry points, which would rename to acc, left out).
        common._init_privateuse1_backend(torch._C._get_privateuse1_backend_name())
        _setup_privateuseone_for_python_backend("latedev")
        torch.latedev.Scheduling = CppScheduling  # no WrapperFxCodegen, no CppWrapperCodegen
        torch.latedev.PythonWrapperCodegen = PythonWrapperCodegen
        common._init_privateuse1_backend(torch._C._get_privateuse1_backend_name())
        print(json.dumps(common.get_scheduling_for_device("latedev").__name__))
        """
    )
    assert last_json(done) == "CppScheduling"


def test_acc_options_route_to_its_config_and_the_cache_key() -> None:
    from torch._inductor.utils import run_and_get_code

    x = torch.randn(4, device="acc")

    def compiled_code(**options: object) -> str:
        torch._dynamo.reset()
        _, (code, *_) = run_and_get_code(torch.compile(lambda t: t.cos() + 1, options=options), x)
        return code

    assert "check_input_devices" not in compiled_code()
    # Same graph, same cache dir: only the option differs, and the key sees it.
    assert "assert arg0_1.device.type == 'acc'" in compiled_code(
        **{"acc.check_input_devices": True}
    )
    # Inductor's own dotted names are never taken for a device namespace.
    assert torch.compile(lambda t: t, options={"triton.cudagraphs": False}) is not None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"acc.no_such": 1}, "the options of device 'acc' are ['check_input_devices']"),
        ({"acc.check_input_devices": "yes"}, "got str should be bool"),
    ],
)
def test_bad_acc_options_are_clear_errors(options: dict, message: str) -> None:
    with pytest.raises(RuntimeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        torch.compile(lambda t: t, options=options)


def test_device_op_overrides_contract(common) -> None:
    from torch._inductor.codegen.cpp_utils import device_to_aten
    from torch._inductor.cpp_builder import get_cpp_torch_device_options

    assert device_to_aten("acc") == "at::kPrivateUse1"
    expected = {"cpu": "at::kCPU", "cuda": "at::kCUDA", "xpu": "at::kXPU", "mps": "at::kMPS"}
    assert {d: device_to_aten(d) for d in (*expected, "meta")} == {**expected, "meta": "at::kMeta"}
    for unsupported in ("mtia", "tpu"):
        with pytest.raises(NotImplementedError):
            device_to_aten(unsupported)
    assert common.get_device_op_overrides("acc").cpp_stream_type() == "void*"
    assert (
        " USE_ACC" in get_cpp_torch_device_options("acc")[0]
        or "USE_ACC" in (get_cpp_torch_device_options("acc")[0])
    )
    assert common.uses_gpu_cpp_wrapper("cuda") and common.uses_gpu_cpp_wrapper("acc")
    assert not common.uses_gpu_cpp_wrapper("cpu")
    with pytest.raises(KeyError, match="register_device_op_overrides"):
        common.get_device_op_overrides("no_such_device")


def test_the_cpp_wrapper_header_is_the_one_the_overrides_name(common, monkeypatch) -> None:
    from torch._inductor import codecache

    class OverCuda(common.DeviceOpOverrides):
        def cpp_wrapper_header_device(self) -> str:
            return "cuda"

    monkeypatch.setitem(common.device_op_overrides_dict, "overcuda", OverCuda())
    header = "torch/csrc/inductor/cpp_wrapper/{}.h"
    assert codecache._get_cpp_wrapper_header("overcuda:1") == header.format("cuda")
    for own in ("cpu", "cuda", "acc"):
        assert codecache._get_cpp_wrapper_header(own) == header.format(own)


def test_visible_devices_env_comes_from_the_interface(privateuse1_backend: str) -> None:
    from torch._inductor.autotune_process import get_visible_devices_env_var

    assert get_visible_devices_env_var("cuda") == "CUDA_VISIBLE_DEVICES"
    register(variant(visible_devices_env=lambda: "ACC_VISIBLE_DEVICES"))
    assert get_visible_devices_env_var(privateuse1_backend) == "ACC_VISIBLE_DEVICES"
    register(variant())
    assert get_visible_devices_env_var(privateuse1_backend) == "CUDA_VISIBLE_DEVICES"


def test_cache_system_info_none_empty_and_unserializable(privateuse1_backend: str) -> None:
    from torch._inductor.codecache import CacheBase

    def system_hash(info: object) -> tuple[str, list[str]]:
        import warnings

        register(variant(get_cache_system_info=classmethod(lambda cls: info)))
        CacheBase.get_system.cache_clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            digest = CacheBase.get_system()["hash"]
        CacheBase.get_system.cache_clear()
        return digest, [str(w.message) for w in caught]

    none, _ = system_hash(None)
    empty, _ = system_hash({})
    real, _ = system_hash({"driver": "1.2"})
    unserializable, warned = system_hash({"v": {1, 2}})
    assert len({none, empty, real}) == 3
    assert unserializable == none
    assert any("must return JSON-serializable data" in w for w in warned)


def test_gpu_mode_code_uses_guards_and_the_fast_allocator() -> None:
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    x = torch.randn(8, device="acc:1")
    out, (code, *_) = run_and_get_code(torch.compile(lambda t: (t.sin() * 2).sum(0)), x)
    assert out.device == torch.device("acc", 1)
    assert "from torch_acc._C import _empty_strided as empty_strided_acc" in code
    assert "empty_strided_acc(" in code and "torch.acc._DeviceGuard(1)" in code


def test_host_mode_code_passes_the_device_index_to_the_fast_allocator() -> None:
    done = run_python(
        """
        import json, torch, torch_acc
        from torch._inductor.utils import run_and_get_code
        x = torch.randn(8, 8, device="acc:1")
        out, (code, *_) = run_and_get_code(torch.compile(lambda t: (t @ t).relu()), x)
        print(json.dumps([str(out.device), [l.strip() for l in code.splitlines()
                                            if "= empty_strided" in l]]))
        """,
        env={"TORCH_ACC_MODE": "host"},
    )
    device, allocations = last_json(done)
    # No device guard in host mode, so the allocator is told the index.
    assert device == "acc:1"
    assert allocations == ["buf0 = empty_strided_acc((8, 8), (8, 1), torch.float32, 1)"]


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_the_corpus_compiles_on_acc_in_gpu_mode(case) -> None:
    torch._dynamo.reset()
    assert_same(case, run(case, "acc", {"backend": "inductor"}), run(case, "cpu"))


HOST_REPORT = """
import json, sys
from rfc_shared.testing.compile_report import main
sys.argv[1:] = sys.argv[1:]
main()
"""


def host_report(*args: str) -> dict[str, dict]:
    done = run_python(
        f"import sys; sys.argv[1:] = {list(args)!r}\n" + HOST_REPORT,
        env={"TORCH_ACC_MODE": "host"},
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {r["case"]: r for r in lines}


def test_the_corpus_compiles_on_acc_in_host_mode() -> None:
    report = host_report()
    assert {name: r["status"] for name, r in report.items()} == {c.name: "ok" for c in CORPUS}


def test_the_corpus_compiles_on_acc_in_host_mode_with_the_cpp_wrapper() -> None:
    report = host_report("--options", json.dumps({"cpp_wrapper": True}))
    assert {name: r["status"] for name, r in report.items()} == {c.name: "ok" for c in CORPUS}
    done = run_python(
        """
        import json, torch, torch_acc
        from torch._inductor.utils import run_and_get_code
        x = torch.randn(4, device="acc:1")
        out, (code, *_) = run_and_get_code(
            torch.compile(lambda t: t.cos() + 1, options={"cpp_wrapper": True}), x)
        print(json.dumps([str(out.device), "cached_torch_device_type_privateuse1, 1" in code]))
        """,
        env={"TORCH_ACC_MODE": "host"},
    )
    assert last_json(done) == ["acc:1", True]


CPU_CODE = """
import json, torch
from torch._inductor.utils import run_and_get_code
from rfc_shared.testing.corpus import CORPUS
codes = {}
for case in CORPUS:
    torch._dynamo.reset()
    model = case.build()
    compiled = torch.compile(model, dynamic=case.dynamic or None)
    _, code = run_and_get_code(compiled, *case.inputs()[0])
    codes[case.name] = code
print(json.dumps(codes))
"""


def test_generated_code_for_cpu_is_identical_to_stock(tmp_path: Path) -> None:
    stock = last_json(
        run_python(
            CPU_CODE,
            slices="none",
            env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "a")},
        )
    )
    overlaid = last_json(run_python(CPU_CODE, env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "b")}))
    assert overlaid == stock
    from torch._inductor.codegen import common

    assert hasattr(common, "uses_gpu_cpp_wrapper")  # rfc3 is what is being compared
