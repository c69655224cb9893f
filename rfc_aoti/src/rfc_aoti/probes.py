"""Conformance probes of slice ``aoti``."""

from __future__ import annotations

import importlib
import inspect
import os
import tempfile

import torch

from rfc_shared.conformance.harness import NotApplicable, ProbeFailure, check, subject
from rfc_shared.conformance.probes import probe


def _common():
    return importlib.import_module("torch._inductor.codegen.common")


def _cpp_wrapper_cpu():
    return importlib.import_module("torch._inductor.codegen.cpp_wrapper_cpu").CppWrapperCpu


def _cpp_wrapper_registered(name: str) -> bool:
    """Whether ``name`` registered a C++ wrapper codegen, which AOTInductor
    generates its model with."""
    common = _common()
    common.init_backend_registration()
    return common.get_wrapper_codegen_for_device(name, cpp_wrapper=True) is not None


@probe(
    "aoti.model_device",
    "a PrivateUse1 model takes the graph's device and a device string the runtime parses",
)
def _model_device() -> str:
    wrapper = _cpp_wrapper_cpu()
    check(
        hasattr(wrapper, "codegen_privateuse1_device"),
        "CppWrapperCpu has no codegen_privateuse1_device(): a PrivateUse1 model gets its "
        "device string as is, which the runtime's parse_device_str refuses",
    )
    source = inspect.getsource(wrapper.codegen_model_constructor)
    check(
        "V.graph.device_type" in source,
        "codegen_model_constructor takes the model's device from the wrapper class",
    )
    return "the model's device is the graph's; its runtime device string carries the index"


@probe(
    "aoti.c_shims",
    "ATen fallbacks without the device's C shim go through the proxy executor",
)
def _c_shims() -> str:
    name = subject().name
    common = _common()
    check(
        hasattr(common.DeviceOpOverrides, "has_c_shim"),
        "DeviceOpOverrides.has_c_shim does not exist: generated C++ calls "
        f"aoti_torch_{name}_<op> for every ATen fallback",
    )
    common.init_backend_registration()  # the backend's _inductor_backend_init()
    wrapper = _cpp_wrapper_cpu()
    asked = {"mm_out": "at::mm_out", "addmm_out": "at::addmm_out", "topk": "at::_ops::topk::call"}
    try:
        common.get_device_op_overrides(name)
    except KeyError:
        registered = False
    else:
        registered = True
    declared = [op for op, kernel in asked.items() if wrapper.device_has_c_shim(kernel, name)]
    check(
        wrapper.device_has_c_shim("at::_ops::topk::call", "cpu"),
        "cpu lost its C shims (device_has_c_shim('at::_ops::topk::call', 'cpu') is False)",
    )
    if not registered:
        return f"{name} registers no DeviceOpOverrides: every ATen fallback via the proxy executor"
    shims = ", ".join(declared) or "none"
    return f"{name} declares C shims for {shims} (of {', '.join(asked)}); the rest: proxy executor"


class _Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.linear(x).sin() + 1, dim=-1)


@probe(
    "aoti.package",
    "torch.export + an AOTInductor package build, load and run on the device like eager",
)
def _package() -> str:
    name = subject().name
    if not _cpp_wrapper_registered(name):
        raise NotApplicable(
            f"{name} registered no C++ wrapper codegen (register_backend_for_device's "
            "cpp_wrapper_codegen): AOTInductor generates its model in C++"
        )
    device = subject().device
    torch.manual_seed(0)
    model = _Small().to(device).eval()
    x = torch.randn(4, 8, device=device)
    with tempfile.TemporaryDirectory() as folder:
        try:
            path = torch._inductor.aoti_compile_and_package(
                torch.export.export(model, (x,)), package_path=os.path.join(folder, "p.pt2")
            )
        except Exception as e:
            raise ProbeFailure(f"aoti_compile_and_package: {_first_line(e)}") from e
        try:
            loaded = torch._inductor.aoti_load_package(path)
        except Exception as e:
            raise ProbeFailure(f"aoti_load_package: {_first_line(e)}") from e
        got = loaded(x)
    want = model(x)
    check(got.device == want.device, f"the package's output is on {got.device}, not {device}")
    check(
        torch.allclose(got.cpu(), want.cpu(), atol=1e-5, rtol=1e-5),
        "the package's output differs from eager",
    )
    return f"exported, packaged, loaded and run on {device}: equal to eager"


def _first_line(e: BaseException) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return f"{type(e).__name__}: {(lines or [''])[-1][:200]}"
