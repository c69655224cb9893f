"""Slice aoti on acc in host mode: its probes pass, and an extern kernel whose
C shim the device does not declare is an error at codegen that names the
shim, not an undefined symbol when the package is compiled or loaded.

(The packages themselves: torch_acc/tests/test_aoti.py.)"""

from __future__ import annotations

import json

import pytest

from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.slice("aoti")

HOST = {"TORCH_ACC_MODE": "host"}


def test_the_aoti_probes_pass_on_acc_in_host_mode() -> None:
    done = run_python(
        """
        import sys
        sys.argv[1:] = ["--backend", "torch_acc", "--format", "json", "--evidence",
                        "--probes", "aoti.model_device,aoti.c_shims,aoti.package"]
        from rfc_shared.conformance.__main__ import main
        main()
        """,
        env=HOST,
        check=False,
    )
    report = json.loads(done.stdout[done.stdout.index("{") :])
    assert {name: cells["stacked"] for name, cells in report["probes"].items()} == {
        "aoti.model_device": "pass",
        "aoti.c_shims": "pass",
        "aoti.package": "pass",
    }, done.stdout + done.stderr
    assert "proxy executor" in report["evidence"]["aoti.c_shims"]["stacked"]


def test_an_extern_kernel_without_a_declared_shim_is_an_error_naming_it() -> None:
    # acc with Inductor's own CPU C++ wrapper (acc's calls its peer's shims),
    # declaring no shim: addmm's would be aoti_torch_acc_addmm_out.
    done = run_python(
        """
        import json, torch, torch_acc
        from torch._inductor.codegen import common
        from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
        from torch_acc._inductor.device_op_overrides import AccDeviceOpOverrides

        AccDeviceOpOverrides.has_c_shim = lambda self, name: False
        common.init_backend_registration()
        acc = common.device_codegens["acc"]
        common.register_backend_for_device(
            "acc", acc.scheduling, acc.wrapper_codegen, CppWrapperCpu, acc.fx_wrapper_codegen
        )
        model = torch.nn.Linear(8, 4).to("acc")
        x = torch.randn(2, 8, device="acc")
        try:
            torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)))
        except Exception as e:
            print(json.dumps(str(e)))
        """,
        env={**HOST, "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"},
    )
    message = last_json(done)
    assert "acc provides no C shim aoti_torch_acc_addmm_out" in message, message
    assert "DeviceOpOverrides.has_c_shim()" in message
