"""The PrivateUse1 backend under test.

The kits name no backend. The backend under test is, in this order:

1. the one this process already renamed PrivateUse1 to (its package was
   imported, or autoloaded by ``import torch``);
2. the package named by ``TORCH_RFC_BACKEND`` (the probe's and the pytest
   plugin's ``--backend`` option set it), imported here;
3. when neither says one, PyTorch's pure-Python PrivateUse1 scaffolding, which
   renames PrivateUse1 to :data:`FALLBACK_NAME` with no kernels, enough for
   tests of the registry itself.

Renaming PrivateUse1 happens once per process.
"""

from __future__ import annotations

import importlib
import os


ENV_BACKEND = "TORCH_RFC_BACKEND"
FALLBACK_NAME = "testdev"
_UNRENAMED = "privateuseone"


class BackendNotFoundError(ImportError):
    """The package named as the backend under test cannot be imported."""


def backend_package() -> str | None:
    """The package named by ``TORCH_RFC_BACKEND``, if any."""
    return os.environ.get(ENV_BACKEND, "").strip() or None


class BackendNameError(ValueError):
    """The backend renamed PrivateUse1 to a name no device string can hold."""


def _explain_an_impossible_name(package: str, cause: BaseException | None = None) -> None:
    """Raise BackendNameError if ``package`` renamed PrivateUse1 to a name that
    ``torch.device`` rejects: ``rename_privateuse1_backend()`` accepts any
    string, and the first ``torch.device`` of it (``_register_device_module``
    makes one) fails with "Invalid device string"."""
    import torch

    name = torch._C._get_privateuse1_backend_name()
    if name == _UNRENAMED:
        return
    try:
        torch.device(name)
    except RuntimeError:
        raise BackendNameError(
            f"{package!r} renamed the PrivateUse1 backend to {name!r}, which no torch.device "
            "accepts: a device type is made of letters and underscores only (no digits, no "
            "'-' or '.'). Rename it, e.g. to "
            f"{''.join(c for c in name if c.isalpha() or c == '_') or 'mydevice'!r}."
        ) from cause


def ensure_privateuse1_backend(package: str | None = None) -> str:
    """Return the PrivateUse1 backend's name, setting one up if needed.

    Args:
        package: The backend's package; default: ``TORCH_RFC_BACKEND``.

    Raises:
        BackendNotFoundError: the package cannot be imported.
        BackendNameError: the package renamed PrivateUse1 to a name that no
            device string can hold (``npu3``).
        RuntimeError: the package imported but did not rename PrivateUse1.
    """
    import torch

    name = torch._C._get_privateuse1_backend_name()
    if name != _UNRENAMED:
        return name
    package = package or backend_package()
    if package is None:
        from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

        _setup_privateuseone_for_python_backend(FALLBACK_NAME)
        return FALLBACK_NAME
    try:
        importlib.import_module(package)
    except ImportError as e:
        raise BackendNotFoundError(
            f"the backend under test {package!r} cannot be imported: {e}"
        ) from e
    except RuntimeError as e:
        _explain_an_impossible_name(package, e)
        raise
    name = torch._C._get_privateuse1_backend_name()
    _explain_an_impossible_name(package)
    if name == _UNRENAMED:
        raise RuntimeError(
            f"importing {package!r} did not rename the PrivateUse1 backend; name the "
            "package that calls torch.utils.rename_privateuse1_backend()"
        )
    return name
