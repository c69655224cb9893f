"""Arms the overlay at interpreter start (run by ``torch_rfc_shared.pth``).

Kept to a few cheap lines because it runs in every interpreter of the
environment, pip included: nothing is read or built until the first
``import torch``.
"""

import sys

from rfc_shared.selection import stock_requested


class _OverlayOnTorchImport:
    """A ``sys.meta_path`` hook that activates the overlay on the first
    ``torch`` import and then hands over to the overlay's own finder."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        from rfc_shared.overlay import activate_on_torch_import

        finder = activate_on_torch_import(cls)
        return finder.find_spec(fullname, path, target) if finder is not None else None


def arm() -> None:
    if stock_requested():
        return
    if _OverlayOnTorchImport not in sys.meta_path:
        sys.meta_path.insert(0, _OverlayOnTorchImport)
