"""The lines of Python the generated wrapper writes for either device."""

import torch
from torch._inductor.codegen.common import DeviceOpOverrides


class MinimalDeviceOpOverrides(DeviceOpOverrides):
    """``torch.<device>`` is ``torch.mhost`` or ``torch.mgpu``: the name
    PrivateUse1 was renamed to."""

    def __init__(self) -> None:
        self.module = f"torch.{torch._C._get_privateuse1_backend_name()}"

    def set_device(self, device_idx: int) -> str:
        return f"{self.module}.set_device({device_idx})"

    def synchronize(self) -> str:
        return f"{self.module}.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"{self.module}.device({device_idx})"
