"""acc: the reference PrivateUse1 backend.

``import torch_acc`` renames PrivateUse1 to ``acc``, registers ``torch.acc``
and the generated tensor/module/storage methods. It imports neither Dynamo nor
Inductor: its compile-time pieces are found through public extension points
(``torch_acc._dynamo.device_interface`` by convention, ``torch_acc._inductor``
through registration).
"""

import torch

from . import _C  # noqa: F401  (registers the allocator, guard, hooks and kernels)
from . import acc as _device_module
from ._mode import mode


torch.utils.rename_privateuse1_backend("acc")
torch._register_device_module("acc", _device_module)
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
)

__all__ = ["mode"]
