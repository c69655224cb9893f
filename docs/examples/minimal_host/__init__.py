"""``mhost``: a host-class PrivateUse1 device, for which Inductor generates C++."""

import minimal_device  # noqa: F401  (registers the allocator, guard, hooks and kernels)
import torch

from . import device


torch.utils.rename_privateuse1_backend("mhost")
torch._register_device_module("mhost", device)
torch.utils.generate_methods_for_privateuse1_backend()
