"""rfc3 on acc, registered by PyTorch 2.15's lazy hook alone: the hook's
contract kept, what subprocess compiles receive, the autotune variable, kernel calls
and allocations, host C++ kernels, and the corpus in both modes.

Tests without the slice marker pass on stock torch too: they guard
behaviour the slice must keep (no backend imported by a CPU compile,
options reaching backward graphs, CPU code identical to stock's).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from rfc_shared.conformance.corpus import CORPUS, assert_same, run
from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.helpers import last_json, run_python, shared_kernel_cache


rfc3 = pytest.mark.slice("rfc3")
# What needs the follow-up series: the fast allocator, C++ kernels on a host
# device (CppScheduling), the precompiled-header skip.


@pytest.fixture(autouse=True)
def _acc_interface_registered(privateuse1_backend: str) -> None:
    # acc registers its interface once per process; the registry restore
    # between tests would otherwise take it away from later tests.
    from torch_acc.registration import ensure_device_interface

    ensure_device_interface()


# -- when acc's Inductor registration runs -------------------------------------


def test_a_cpu_compile_imports_no_backend_and_a_later_one_is_found() -> None:
    """torch-acc is installed, not imported, autoload on: a CPU compile leaves
    torch_acc unimported, PrivateUse1 unrenamed and the accelerator as it was
    (the 2.13 series' entry-point scan imported it there); importing it
    afterwards, nothing remembered before its rename hides its backend."""
    done = run_python(
        """
        import json, sys, torch
        accelerator = str(torch.accelerator.current_accelerator())
        torch.compile(lambda x: x.sin() + 1)(torch.ones(3))
        after_cpu = ["torch_acc" in sys.modules, torch._C._get_privateuse1_backend_name(),
                     str(torch.accelerator.current_accelerator()) == accelerator]
        import torch_acc
        out = torch.compile(lambda x: x.cos() * 2)(torch.ones(3, device="acc:1"))
        print(json.dumps([after_cpu, str(out.device), out.cpu().tolist()]))
        """,
        env={"TORCH_DEVICE_BACKEND_AUTOLOAD": None},
    )
    after_cpu, device, values = last_json(done)
    assert after_cpu == [False, "privateuseone", True]
    assert device == "acc:1" and values == pytest.approx([2 * 0.5403023] * 3)


def test_acc_registers_at_the_first_compile_as_upstream_decided() -> None:
    """#192896's contract, kept: torch.acc._inductor_backend_init runs at the
    first compile while acc is unregistered, a CPU compile included (its own
    tests run stacked: shared/src/rfc_shared/landed_tests)."""
    done = run_python(
        """
        import json, torch, torch_acc
        from torch._inductor.codegen import common
        torch.compile(lambda x: x + 1)(torch.ones(2))
        print(json.dumps("acc" in common.device_codegens))
        """
    )
    assert last_json(done) is True


# -- per-device options ----------------------------------------------------------


def test_backward_graphs_see_acc_options() -> None:
    """Upstream patches the options around inner_compile, so the backward
    compile sees them too (the 2.13 series patched the forward only)."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    x = torch.randn(8, device="acc", requires_grad=True)
    f = torch.compile(lambda t: (t * 2).sin().sum(), options={"acc.check_input_devices": True})
    _, codes = run_and_get_code(lambda: f(x).backward())
    assert ["# acc.check_input_devices" in code for code in codes] == [True, True]


# A device config that records each process importing it.
CONFIG_SOURCE = """
import os, sys
from torch.utils._config_module import install_config_module
flag: bool = False
with open(os.environ["RFC3_CONFIG_IMPORTS"], "a") as _imports:
    _imports.write(f"{__name__} {os.getpid()}\\n")
del _imports
install_config_module(sys.modules[__name__])
"""


@rfc3
def test_a_subprocess_compile_gets_only_its_devices_configs(tmp_path: Path) -> None:
    """The child of a serialized compile imports the configs of its graph's
    devices (stock 2.13 sends it none) and no other (stock 2.15 sends every
    registered one, and fails on a config the child cannot import)."""
    importable, parent_only = tmp_path / "importable", tmp_path / "parent_only"
    for folder, name in ((importable, "cpu_config"), (parent_only, "parent_only_config")):
        folder.mkdir()
        (folder / f"{name}.py").write_text(CONFIG_SOURCE)
    imports = tmp_path / "imports.txt"
    done = run_python(
        f"""
        import importlib.util, json, os, sys, torch
        from torch._inductor.codegen import common
        from torch._inductor.codegen.cpp import CppScheduling
        from torch._inductor.codegen.wrapper import PythonWrapperCodegen

        def load(name, folder):
            spec = importlib.util.spec_from_file_location(name, f"{{folder}}/{{name}}.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            return module

        # A backend registered in this process only: the child cannot import it.
        common.register_backend_for_device(
            "parentonly", CppScheduling, PythonWrapperCodegen,
            device_custom_config=load("parent_only_config", {str(parent_only)!r}))
        # The CPU's registration, with a config the child can import.
        common.init_backend_registration()
        cpu = common.device_codegens["cpu"]
        common.register_backend_for_device(
            "cpu", cpu.scheduling, cpu.wrapper_codegen, cpu.cpp_wrapper_codegen,
            cpu.fx_wrapper_codegen, device_custom_config=load("cpu_config", {str(importable)!r}))
        out = torch.compile(lambda x: x.sin() + 1)(torch.zeros(2))
        print(json.dumps([os.getpid(), out.tolist()]))
        """,
        env={
            "TORCHINDUCTOR_FX_COMPILE_MODE": "SUBPROCESS",
            "RFC3_CONFIG_IMPORTS": str(imports),
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(importable), os.environ.get("PYTHONPATH")])
            ),
        },
    )
    parent, values = last_json(done)
    assert values == [1.0, 1.0]
    children = {
        line.split()[0]
        for line in imports.read_text().splitlines()
        if int(line.split()[1]) != parent
    }
    assert children == {"cpu_config"}


# -- autotune ------------------------------------------------------------------


@rfc3
def test_the_autotune_variable_comes_from_the_interface(privateuse1_backend: str) -> None:
    from torch._inductor.autotune_process import get_visible_devices_env_var

    assert get_visible_devices_env_var("cuda") == "CUDA_VISIBLE_DEVICES"
    register(variant(visible_devices_env=lambda: "ACC_VISIBLE_DEVICES"))
    assert get_visible_devices_env_var(privateuse1_backend) == "ACC_VISIBLE_DEVICES"
    register(variant())
    with pytest.raises(ValueError, match="visible_devices_env"):
        get_visible_devices_env_var(privateuse1_backend)


# -- generated code --------------------------------------------------------------


@pytest.mark.slice("fast_allocator")
def test_gpu_mode_code_uses_guards_and_the_fast_allocator() -> None:
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    x = torch.randn(8, device="acc:1")
    out, (code, *_) = run_and_get_code(torch.compile(lambda t: (t.sin() * 2).sum(0)), x)
    assert out.device == torch.device("acc", 1)
    assert "from torch_acc._C import _empty_strided as empty_strided_acc" in code
    assert "empty_strided_acc((), (), torch.float32, 1)" in code
    assert "torch.acc._DeviceGuard(1)" in code


@pytest.mark.slice("fast_allocator")
def test_host_mode_code_calls_cpp_kernels_and_passes_the_device_index() -> None:
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
    assert device == "acc:1"
    assert allocations == ["buf0 = empty_strided_acc((8, 8), (8, 1), torch.float32, 1)"]


# -- the corpus ------------------------------------------------------------------


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_the_corpus_compiles_on_acc_in_gpu_mode(case) -> None:
    # Stock torch 2.15 with registry_core and rfc1 compiles acc's GPU mode too; this
    # checks that rfc3 keeps it so.
    torch._dynamo.reset()
    assert_same(case, run(case, "acc", {"backend": "inductor"}), run(case, "cpu"))


HOST_REPORT = """
import json, sys
from rfc_shared.conformance.compile_report import main
sys.argv[1:] = sys.argv[1:]
main()
"""


def host_report(*args: str) -> dict[str, dict]:
    # In host mode acc's kernels are the CPU's C++ kernels: compiled once in the
    # run, whichever test (this one with another wrapper, the CPU corpus) came first.
    with shared_kernel_cache() as cache:
        done = run_python(
            f"import sys; sys.argv[1:] = {list(args)!r}\n" + HOST_REPORT,
            env={**cache, "TORCH_ACC_MODE": "host"},
        )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {r["case"]: r for r in lines}


@pytest.mark.slice("rfc3")
def test_the_corpus_compiles_on_acc_in_host_mode() -> None:
    report = host_report()
    assert {name: r["status"] for name, r in report.items()} == {c.name: "ok" for c in CORPUS}


# acc's C++ wrapper calls the CPU's C shims, which run the CPU's kernels
# directly: the CPU has no kernel for the overrideable fused attention acc
# routes scaled_dot_product_attention to, and Inductor's runtime-dispatch
# fallback cannot return that op's int outputs (max_q, max_k).
CPP_WRAPPER_GAPS = {"transformer_block", "transformer_train_step", "masked_attention"}


@pytest.mark.slice("cpp_wrapper_headers")
def test_the_corpus_compiles_on_acc_in_host_mode_with_the_cpp_wrapper() -> None:
    report = host_report("--options", json.dumps({"cpp_wrapper": True}))
    assert {name: r["status"] for name, r in report.items()} == {
        c.name: "fail" if c.name in CPP_WRAPPER_GAPS else "ok" for c in CORPUS
    }
    for name in CPP_WRAPPER_GAPS:
        assert "_scaled_dot_product_fused_attention_overrideable" in report[name]["message"]
    done = run_python(
        """
        import json, torch, torch_acc
        from torch._inductor.utils import run_and_get_code
        x = torch.randn(4, device="acc:1")
        out, (code, *_) = run_and_get_code(
            torch.compile(lambda t: t.cos() + 1, options={"cpp_wrapper": True}), x)
        print(json.dumps([str(out.device), "cached_torch_device_type_privateuse1" in code]))
        """,
        env={"TORCH_ACC_MODE": "host"},
    )
    assert last_json(done) == ["acc:1", True]


# Built-in devices' generated code, forward and backward, is stock's with every
# slice applied: tests/reliability/test_invariance.py compiles the corpus for cpu.


# -- flex attention --------------------------------------------------------------


@pytest.mark.slice("flex_attention")
@pytest.mark.parametrize("queries", [128, 4], ids=["attention", "decoding"])
def test_flex_attention_compiles_on_acc_with_inductors_triton_templates(queries: int) -> None:
    """Flex attention asks acc's interface whether it is Triton capable instead
    of refusing a device outside its list, and the decoding lowering sizes its
    split by acc's multiprocessors instead of CUDA's."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def causal(b, h, q, kv):
        return q >= kv

    torch.manual_seed(0)
    q = torch.randn(1, 2, queries, 16)
    k, v = torch.randn(1, 2, 128, 16), torch.randn(1, 2, 128, 16)
    offset = 128 - queries  # the queries are the last ones: causal over the keys before
    mask = torch.ones(queries, 128, dtype=torch.bool).tril(offset)
    leaves = [t.requires_grad_() for t in (q, k, v)]
    want = torch.nn.functional.scaled_dot_product_attention(*leaves, attn_mask=mask)
    want.sum().backward()

    def shifted(b, h, q_idx, kv_idx):
        return causal(b, h, q_idx + offset, kv_idx)

    block_mask = create_block_mask(shifted, 1, 1, queries, 128, device="acc")
    acc = [t.detach().to("acc").requires_grad_() for t in (q, k, v)]
    # fullgraph: the device check is no graph break inside flex attention.
    got = torch.compile(flex_attention, fullgraph=True)(*acc, block_mask=block_mask)
    got.sum().backward()
    torch.testing.assert_close(got.detach().cpu(), want.detach(), atol=1e-5, rtol=1e-5)
    for a, c in zip(acc, leaves, strict=True):
        torch.testing.assert_close(a.grad.cpu(), c.grad, atol=1e-4, rtol=1e-4)


# -- layout optimization ---------------------------------------------------------


@pytest.mark.slice("layout_opt")
def test_a_convnet_on_acc_is_laid_out_as_its_convolutions_run() -> None:
    """acc's convolutions are ATen's overrideable ones, whose results fake
    tensors expect contiguous unless acc declares channels-last convolutions
    (slice backend_feature): Inductor turns the graph to channels-last only
    where they keep it, never copying each result back and forth."""
    from torch._inductor.utils import run_and_get_code

    import torch_acc

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(128, 128, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(128, 128, 3, padding=1),
    ).to("acc")
    x = torch.randn(2, 128, 8, 8, device="acc", requires_grad=True)
    _, codes = run_and_get_code(lambda: torch.compile(model)(x).sum().backward())
    assert len(codes) == 2  # forward and backward
    channels_last = "(8192, 1, 1024, 128)"  # the strides of (2, 128, 8, 8) in channels-last
    # Settled by the compile: what acc's interface told fake tensors.
    keeps_channels_last = torch_acc._C._channels_last_convolutions()
    assert [channels_last in code for code in codes] == [keeps_channels_last] * 2
