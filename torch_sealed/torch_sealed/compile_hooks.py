"""The hooks through which PyTorch finds sealed's compile-time pieces.

PyTorch looks for them on the device module ``torch.sealed`` and calls them
when it first needs sealed: Dynamo's device registry
``get_device_interface()``, Inductor ``_inductor_backend_init()``. The package
attaches them to the device module (``sealed.py``): the pieces they import
bind the device module's functions, so defined there, the device module would
import what imports it.
"""

from __future__ import annotations


def get_device_interface() -> type:
    """sealed's DeviceInterface: PyTorch's hook on the device module, which
    Dynamo's device registry calls when it first needs sealed."""
    from ._dynamo.device_interface import registered_class

    return registered_class()


def _inductor_backend_init() -> None:
    """Registers sealed's Inductor backend: PyTorch's lazy hook on the device
    module, called when Inductor first needs sealed's backend."""
    from ._inductor import register_inductor_backend

    register_inductor_backend()
