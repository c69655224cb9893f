"""sealed's ``DeviceInterface``, at the path the lazy-registration convention
(pytorch/pytorch#191314) looks for: ``torch_<backend>._dynamo.device_interface``.

Duck-typed (it does not import ``torch._dynamo``), and short: a host device
without streams, events, ``synchronize`` or device properties implements the
four methods every device needs and inherits the rest of DeviceInterface's
defaults, among them ``is_gpu() -> False``.
"""

from __future__ import annotations

from .. import sealed


class DeviceInterface:
    # torch.sealed's own functions, so that Dynamo recognizes a call of
    # torch.sealed.current_device() as this slot.
    is_available = staticmethod(sealed.is_available)
    device_count = staticmethod(sealed.device_count)
    current_device = staticmethod(sealed.current_device)
    set_device = staticmethod(sealed.set_device)
