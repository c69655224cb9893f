"""acc: the reference PrivateUse1 backend.

``import torch_acc`` renames PrivateUse1 to ``acc``, registers ``torch.acc``
and the generated tensor/module/storage methods. It imports neither Dynamo nor
Inductor: its compile-time pieces are found through hooks on the device module
``torch.acc`` (``get_device_interface`` for Dynamo's device registry,
``_inductor_backend_init`` for Inductor), which import them when first needed.
"""

import sys

import torch

from ._mode import mode


# The extension registers acc's allocator, guard, hooks and kernels. Exactly
# one may load: the host build under the name ``torch_acc._C`` is made to
# resolve to the CUDA build where acc runs over CUDA memory.
if mode == "cuda":
    from . import _C_cuda as _C

    sys.modules[f"{__name__}._C"] = _C
else:
    from . import _C
from . import acc as _device_module
from . import compile_hooks


# PyTorch finds acc's compile-time pieces through these hooks on the device
# module (see compile_hooks.py for why they are attached, not defined there).
_device_module.get_device_interface = compile_hooks.get_device_interface
_device_module._inductor_backend_init = compile_hooks._inductor_backend_init
torch.utils.rename_privateuse1_backend("acc")
torch._register_device_module("acc", _device_module)
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
)

__all__ = ["mode"]
