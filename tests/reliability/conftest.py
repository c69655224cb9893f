"""The reliability suite runs on the stacked overlay (``nox -s stacked``):
every slice applied, as a vendor would run them together."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _every_slice_applied() -> None:
    import torch  # noqa: F401  (the overlay activates on the first torch import)

    from rfc_shared import overlay
    from rfc_shared.overlay.base import installed_torch_base
    from rfc_shared.overlay.roster import installed

    current = overlay.active()
    active = sorted(s.name for s in current.slices) if current is not None else []
    wanted = sorted(s.name for s in installed().select(None, installed_torch_base()))
    if active != wanted:
        pytest.fail(
            f"the reliability suite needs every slice ({', '.join(wanted)}); the overlay "
            f"serves {', '.join(active) or 'stock torch'} (TORCH_RFC_SLICES=all)",
            pytrace=False,
        )


# The suite's own modules (bad_inputs) sit next to the tests.
sys.path.insert(0, str(Path(__file__).parent))
