"""The backend under test, resolved before anything is probed.

The package ``--backend`` names is imported even where PrivateUse1 was
already renamed (``import torch`` autoloads backends through the
``torch.backends`` entry point): a module like ``torch_x.compiler`` may be
what registers the backend's compile-time pieces. A PrivateUse1 backend that
belongs to another package, or a name no device string can hold, stops the
probe at once, saying why.
"""

from __future__ import annotations

import importlib
import re


# The rule torch.device applies to a device type, as the registry-core slice's
# registration entry states it (rename_privateuse1_backend() takes any string).
NAME_RULE = "a device type is made of letters and underscores only"
_DEVICE_TYPE = re.compile(r"[A-Za-z_]+")
_UNRENAMED = "privateuseone"


class UnusableBackend(RuntimeError):
    """The backend under test cannot be probed; the message says why and what
    to do."""


def check_name(name: str) -> None:
    """Refuse a PrivateUse1 name that no ``torch.device`` accepts (``npu3``)."""
    if not _DEVICE_TYPE.fullmatch(name):
        raise UnusableBackend(
            f"The PrivateUse1 backend was renamed to '{name}', which no torch.device accepts: "
            f"{NAME_RULE}. Rename the backend before anything uses it."
        )


def _owner(module: object) -> str:
    """The top-level package of a device module (``torch_acc`` for torch.acc)."""
    qualified = getattr(module, "__name__", None) or type(module).__module__
    return qualified.split(".")[0]


def resolve(package: str | None) -> str:
    """The PrivateUse1 backend's name, with ``package`` (if given) imported.

    Raises:
        UnusableBackend: the name breaks :data:`NAME_RULE`, ``package`` cannot
            be imported, or PrivateUse1 belongs to another package.
    """
    import torch

    from rfc_shared.testing.backends import ensure_privateuse1_backend

    try:
        name = ensure_privateuse1_backend(package)
    except (ImportError, RuntimeError, ValueError) as e:
        renamed = torch._C._get_privateuse1_backend_name()
        if renamed != _UNRENAMED:
            check_name(renamed)
        raise UnusableBackend(str(e)) from e
    check_name(name)
    if package is None:
        return name
    owner = _owner(getattr(torch, name))
    if owner != package.split(".")[0]:
        raise UnusableBackend(
            f"--backend {package}: PrivateUse1 is already '{name}', set up by {owner} (imported "
            "first, or autoloaded by `import torch` through the 'torch.backends' entry point), "
            "and it is renamed once per process. Probe that package, or set "
            "TORCH_DEVICE_BACKEND_AUTOLOAD=0 so that only the named one loads."
        )
    try:
        importlib.import_module(package)  # honoured where autoload came first
    except Exception as e:
        raise UnusableBackend(f"--backend {package}: {type(e).__name__}: {e}") from e
    return name
