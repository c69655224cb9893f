"""The PrivateUse1 backend under test, resolved before anything is probed.

The kits name no backend. The backend under test is, in this order:

1. the one this process already renamed PrivateUse1 to (its package was
   imported, or autoloaded by ``import torch``);
2. the package named by ``TORCH_RFC_BACKEND`` (the probe's and the pytest
   plugin's ``--backend`` option set it), imported here;
3. when neither says one, PyTorch's pure-Python PrivateUse1 scaffolding, which
   renames PrivateUse1 to :data:`FALLBACK_NAME` with no kernels, enough for
   tests of the registry itself.

Renaming PrivateUse1 happens once per process. The probe (:func:`resolve`)
also imports the package ``--backend`` names where PrivateUse1 was already
renamed: a module like ``torch_x.compiler`` may be what registers the
backend's compile-time pieces. A PrivateUse1 backend that belongs to another
package, or a name no device string can hold, stops the probe at once, saying
why.
"""

from __future__ import annotations

import importlib
import os
import re


ENV_BACKEND = "TORCH_RFC_BACKEND"
FALLBACK_NAME = "testdev"
# The rule torch.device applies to a device type, as the registry-core slice's
# registration entry states it (rename_privateuse1_backend() takes any string).
NAME_RULE = "a device type is made of letters and underscores only"
_DEVICE_TYPE = re.compile(r"[A-Za-z_]+")
_UNRENAMED = "privateuseone"


class BackendNotFoundError(ImportError):
    """The package named as the backend under test cannot be imported."""


class BackendNameError(ValueError):
    """The backend renamed PrivateUse1 to a name no device string can hold."""


class UnusableBackend(RuntimeError):
    """The backend under test cannot be probed; the message says why and what
    to do."""


# The package the probe's --backend names, for this process only: the matrix
# passes it on to each column's interpreter as an argument.
_chosen: list[str] = []


def choose_backend(package: str | None) -> None:
    """Make ``package`` the backend under test in this process (None: what
    :func:`backend_package` finds without a choice)."""
    _chosen[:] = [package] if package else []


def backend_package() -> str | None:
    """The package chosen with :func:`choose_backend`, else the one
    ``TORCH_RFC_BACKEND`` names, if any."""
    return _chosen[0] if _chosen else os.environ.get(ENV_BACKEND, "").strip() or None


def _explain_an_impossible_name(package: str, cause: BaseException | None = None) -> None:
    """Raise BackendNameError if ``package`` renamed PrivateUse1 to a name that
    ``torch.device`` rejects: ``rename_privateuse1_backend()`` accepts any
    string, and the first ``torch.device`` of it (``_register_device_module``
    makes one) fails with "Invalid device string"."""
    import torch

    name = torch._C._get_privateuse1_backend_name()
    if name == _UNRENAMED or _DEVICE_TYPE.fullmatch(name):
        return
    raise BackendNameError(
        f"{package!r} renamed the PrivateUse1 backend to {name!r}, which no torch.device "
        f"accepts: {NAME_RULE} (no digits, no '-' or '.'). Rename it, e.g. to "
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
