"""sealed: a second PrivateUse1 test backend, deliberately unlike acc.

A host-class device (Inductor compiles C++ kernels for it) with no streams
and no events, whose memory the host may touch only while one of sealed's
own kernels runs: each allocation is a mapping kept ``PROT_NONE`` otherwise,
so a wrapper that calls a kernel without opening its memory faults at once.
``torch.sealed`` is the minimal device module: ``is_available``,
``device_count``, ``current_device``, ``set_device``.

``import torch_sealed`` renames PrivateUse1 to ``sealed``. It imports neither
Dynamo nor Inductor: Dynamo's device registry asks
``torch.sealed.get_device_interface()`` and Inductor
``torch.sealed._inductor_backend_init()`` when they first need them.
"""

import torch

from . import (
    _C,  # noqa: F401  (registers the allocator, guard, hooks and kernels)
    compile_hooks,
)
from . import sealed as _device_module


# PyTorch finds sealed's compile-time pieces through these hooks on the device
# module (see compile_hooks.py for why they are attached, not defined there).
_device_module.get_device_interface = compile_hooks.get_device_interface
_device_module._inductor_backend_init = compile_hooks._inductor_backend_init
torch.utils.rename_privateuse1_backend("sealed")
torch._register_device_module("sealed", _device_module)
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_storage=True
)
