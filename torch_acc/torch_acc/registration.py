"""Registering acc for compilation through PyTorch's public extension points.

This is what a vendor can do without patching PyTorch: register a
DeviceInterface, an Inductor backend and its op overrides. Each call imports
Dynamo or Inductor, so none of them runs at ``import torch_acc``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from rfc_shared.conformance.interface_entry import register_privateuse1_interface

from . import acc
from ._mode import is_cuda_mode, is_gpu_mode


def device_interface() -> type:
    """acc's interface (``torch_acc/_dynamo/device_interface.py``) as a
    ``DeviceInterface`` subclass, one class per process."""
    # Importing Dynamo's registry may register acc's interface through
    # torch.acc.get_device_interface() (slice lazy_reg), which calls this
    # function: import it before the class is made, so the inner call makes it.
    import torch._dynamo.device_interface  # noqa: F401

    return _interface_class()


@functools.cache
def _interface_class() -> type:
    from torch._dynamo.device_interface import DeviceInterface as Base

    from ._dynamo.device_interface import DeviceInterface as Acc

    return type("AccInterface", (Acc, Base), {"__module__": __name__, "__doc__": Acc.__doc__})


def register_device_interface() -> None:
    """Registers acc's DeviceInterface with Dynamo's registry.

    Uses the PrivateUse1 entry where the torch in use has it, and otherwise the
    existing per-name entry for ``acc`` and each ``acc:<index>``.
    """
    register_privateuse1_interface("acc", device_interface(), acc.device_count)


def ensure_device_interface() -> None:
    """Makes sure Dynamo has acc's DeviceInterface: found through
    ``torch.acc.get_device_interface()`` where the torch in use asks the device
    module (slice lazy_reg), registered explicitly otherwise."""
    from torch._dynamo.device_interface import get_interface_for_device

    try:
        get_interface_for_device("acc")  # asks torch.acc's hook where torch does that
    except NotImplementedError:
        # Inductor is compiling a graph Dynamo traced on acc without an
        # interface: its fake tensors expected acc's convolutions contiguous.
        from ._dynamo.device_interface import settle_convolution_layout

        settle_convolution_layout(keep_channels_last=False)
        register_device_interface()


def register_inductor_backend() -> None:
    """Registers acc's scheduling, wrapper codegen, op overrides and options.

    Inductor calls this through ``torch.acc._inductor_backend_init`` when it
    first needs acc's backend; where nothing registered acc's DeviceInterface
    (no lazy registration through the device module's hook), it registers that
    too.
    """
    from torch._inductor.codegen.common import (
        register_backend_for_device,
        register_device_op_overrides,
    )

    ensure_device_interface()

    from ._inductor import config
    from ._inductor.device_op_overrides import AccDeviceOpOverrides, AccOverCudaDeviceOpOverrides
    from ._inductor.wrapper import AccPythonWrapperCodegen

    overrides = AccOverCudaDeviceOpOverrides() if is_cuda_mode() else AccDeviceOpOverrides()
    if is_gpu_mode():
        from ._inductor.triton import triton_scheduling
        from ._inductor.wrapper import cuda_cpp_wrapper_codegen

        scheduling = triton_scheduling()
        # Interpreted Triton kernels have no binaries for a C++ wrapper to load.
        cpp_wrapper = cuda_cpp_wrapper_codegen() if is_cuda_mode() else None
    else:
        from torch._inductor.codegen.cpp import CppScheduling as scheduling

        from ._inductor.wrapper import cpp_wrapper_codegen

        cpp_wrapper = cpp_wrapper_codegen()

    register_backend_for_device(
        "acc",
        scheduling,
        AccPythonWrapperCodegen,
        cpp_wrapper,
        device_custom_config=config,
    )
    register_device_op_overrides("acc", overrides)
    register_static_launcher()
    register_autotuning()


def register_static_launcher() -> None:
    """Over CUDA memory acc's Triton kernels are CUDA binaries launched on CUDA's
    streams: where the torch in use takes a backend's static launcher (slice
    rfc3_followup), Inductor launches them with CUDA's, as it does cuda's,
    instead of through Triton's Python launcher and its host time per launch.
    Interpreted kernels (acc over host memory) have no binaries to launch."""
    if not is_cuda_mode():
        return
    from torch._inductor.runtime import static_triton_launcher

    register = getattr(static_triton_launcher, "register_statically_launched_kernel", None)
    if register is not None:
        register("acc", static_triton_launcher.StaticallyLaunchedCudaKernel)


def heuristics_device_type() -> str:
    """The device type whose template and codegen heuristics acc uses: cuda's
    over CUDA memory, where acc's Triton kernels run on the GPU; otherwise the
    CPU's, which Triton templates get where they run on the host (acc's run in
    Triton's interpreter; in host mode acc generates C++ and has no Triton
    templates)."""
    return "cuda" if is_cuda_mode() else "cpu"


def _benchmark(benchmarker: Any, fn: Callable[[], Any], **kwargs: Any) -> Any:
    """acc's benchmarker for autotuning: over CUDA memory the GPU path with
    acc's own events and synchronization; otherwise acc's work is done when an
    operator returns, as the CPU's is, and the CPU path times it."""
    if is_cuda_mode():
        kwargs.setdefault("device_type", "acc")
        return benchmarker.benchmark_gpu(fn, **kwargs)
    return benchmarker.benchmark_cpu(fn, **kwargs)


def heuristics_registry() -> ModuleType | None:
    """torch 2.15's heuristics registry; before 2.15, the template heuristics' one."""
    for name in (
        "torch._inductor.heuristics.registry",
        "torch._inductor.template_heuristics.registry",
    ):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    return None


def register_autotuning() -> None:
    """Registers what autotuning needs for acc: a benchmarker that times acc's
    choices on acc, and, where the torch in use can alias them (slice rfc3),
    another device type's heuristics, max-autotune's Triton GEMM configs
    among them. Without the alias acc's Triton GEMM templates get no configs
    and max-autotune tunes ATen alone."""
    from torch._inductor.runtime import benchmarking

    if hasattr(benchmarking, "register_benchmarker"):
        benchmarking.register_benchmarker("acc", _benchmark, override=True)
    registry = heuristics_registry()
    if registry is None:
        return
    alias = getattr(registry, "register_heuristic_device_alias", None)
    if alias is not None and registry.get_heuristic_device_alias("acc") is None:
        alias("acc", heuristics_device_type())
