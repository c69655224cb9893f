"""sealed's ``DeviceInterface``.

Duck-typed (importing this module imports no ``torch._dynamo``; see
:func:`registered_class`), and short: a host device
without streams, events, ``synchronize`` or device properties implements the
four methods every device needs and inherits the rest of DeviceInterface's
defaults, among them ``is_gpu() -> False``.
"""

from __future__ import annotations

import functools

from .. import sealed


class DeviceInterface:
    # torch.sealed's own functions. They behave like torch.cuda's of the same
    # names, so sealed names them in dynamo_traced_methods: Dynamo then traces
    # a call of torch.sealed.current_device() like torch.cuda.current_device()
    # (a guarded constant) rather than breaking the graph on it.
    is_available = staticmethod(sealed.is_available)
    device_count = staticmethod(sealed.device_count)
    current_device = staticmethod(sealed.current_device)
    set_device = staticmethod(sealed.set_device)
    dynamo_traced_methods = ("is_available", "device_count", "current_device", "set_device")


def registered_class() -> type:
    """The interface as a ``torch._dynamo.device_interface.DeviceInterface``
    subclass, what the registry takes (this imports Dynamo). One class,
    whichever path registers it."""
    # Importing Dynamo's registry may register sealed's interface through
    # torch.sealed.get_device_interface() (slice lazy_reg), which calls this
    # function: import it first, so the inner call makes the class.
    import torch._dynamo.device_interface  # noqa: F401

    return _interface_class()


@functools.cache
def _interface_class() -> type:
    from torch._dynamo.device_interface import DeviceInterface as Base

    return type("SealedInterface", (DeviceInterface, Base), {"__module__": __name__})
