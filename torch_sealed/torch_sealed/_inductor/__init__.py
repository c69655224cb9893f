"""sealed's Inductor backend: Inductor's C++ kernels and Python wrapper, with
each kernel call inside ``torch.sealed._unsealed(...)``.

Importing this module imports Inductor; ``torch.sealed._inductor_backend_init``
imports it when Inductor first needs sealed's backend.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch._inductor.codegen.common import (
    DeviceOpOverrides,
    register_backend_for_device,
    register_device_op_overrides,
)
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.codegen.wrapper import PythonWrapperCodegen


class SealedDeviceOpOverrides(DeviceOpOverrides):
    """What generated code does on sealed devices: it opens the memory of a
    kernel's arguments for the call."""

    def kernel_call_guard(self, kernel_name: str, call_args: Sequence[str]) -> str:
        return f"torch.sealed._unsealed({', '.join(call_args)})"


def register_inductor_backend() -> None:
    """Registers sealed's DeviceInterface (where the registry did not get it
    from ``torch.sealed.get_device_interface()``), its scheduling and wrapper,
    and its op overrides.

    Refuses a torch whose generated code cannot wrap kernel calls: there,
    compiled code would fault at its first kernel.
    """
    if not hasattr(DeviceOpOverrides, "kernel_call_guard"):
        raise RuntimeError(
            "sealed cannot compile with this torch: its kernels may touch sealed memory only "
            "inside torch.sealed._unsealed(), and this torch's Inductor cannot wrap kernel "
            "calls (DeviceOpOverrides.kernel_call_guard, slice rfc3)"
        )
    _ensure_device_interface()
    register_backend_for_device("sealed", CppScheduling, PythonWrapperCodegen)
    register_device_op_overrides("sealed", SealedDeviceOpOverrides())


def _ensure_device_interface() -> None:
    from torch._dynamo import device_interface as registry

    try:
        registry.get_interface_for_device("sealed")
        return  # found through torch.sealed.get_device_interface(), or registered
    except NotImplementedError:
        pass
    from rfc_shared.conformance.interface_entry import register_privateuse1_interface

    from .. import sealed
    from .._dynamo.device_interface import registered_class

    register_privateuse1_interface("sealed", registered_class(), sealed.device_count)
