"""The hooks through which PyTorch finds acc's compile-time pieces.

PyTorch looks for them on the device module ``torch.acc`` and calls them when
it first needs acc: Dynamo's device registry ``get_device_interface()``,
Inductor ``_inductor_backend_init()``. They import what they register only
then. The package attaches them to the device module (``acc.py``) rather than
the device module defining them, because the pieces they import use the
device module's runtime: defined there, the runtime would import what imports
it.
"""

from __future__ import annotations


def get_device_interface() -> type:
    """acc's DeviceInterface: PyTorch's hook on the device module, which
    Dynamo's device registry calls when it first needs acc."""
    from .registration import device_interface

    return device_interface()


def _inductor_backend_init() -> None:
    """Registers acc's Inductor backend: PyTorch's lazy hook on the device
    module, which Inductor calls when it first needs acc's backend."""
    from .registration import register_inductor_backend

    register_inductor_backend()
