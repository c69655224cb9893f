"""Registering a PrivateUse1 backend's DeviceInterface through the best entry
the torch in use has.

The conformance harness and both reference backends (torch_acc and
torch_sealed, which depend on this distribution for it) import it from here.
It imports only torch's registry, when called, and importing it imports
nothing of the overlay.
"""

from __future__ import annotations

from collections.abc import Callable


def register_privateuse1_interface(
    name: str, interface: type, device_count: Callable[[], int]
) -> None:
    """Registers ``interface`` for the PrivateUse1 backend ``name``.

    A torch with the PrivateUse1 entry (``register_interface_for_device_PrivateUse1``,
    the registry core) gets one registration, which serves ``name`` and every
    ``name:<index>``; any other torch gets its per-name entry for ``name`` and
    for each of the backend's indices. ``device_count`` is asked only then:
    asking may initialize the device, which may register an interface by
    convention first.
    """
    from torch._dynamo import device_interface as registry

    if hasattr(registry, "register_interface_for_device_PrivateUse1"):
        registry.register_interface_for_device_PrivateUse1(name, interface)
        return
    for key in [name, *(f"{name}:{i}" for i in range(device_count()))]:
        registry.register_interface_for_device(key, interface)
