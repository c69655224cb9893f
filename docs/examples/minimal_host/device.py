"""``torch.mhost``, the device module: what PyTorch, Dynamo and Inductor call on it."""

from minimal_common.device import *  # noqa: F403  (the functions every device module has)


def get_device_interface() -> type:
    """Dynamo's registry calls this when it first needs mhost, possibly while
    ``import torch._dynamo`` is running: it imports the interface module only."""
    from minimal_common.interface import HostInterface

    return HostInterface


def _inductor_backend_init() -> None:
    """Inductor calls this when it first compiles for mhost."""
    from .inductor import register

    register()
