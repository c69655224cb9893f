"""``mgpu``: a GPU-class PrivateUse1 device, for which Inductor generates Triton
kernels. Over host memory and without a GPU they run in Triton's interpreter
(``TRITON_INTERPRET=1``)."""

import minimal_device  # noqa: F401  (the same C++ device as mhost's)
import torch

from . import device


torch.utils.rename_privateuse1_backend("mgpu")
torch._register_device_module("mgpu", device)
torch.utils.generate_methods_for_privateuse1_backend()
