"""Slice ``lazy_reg`` (pytorch/pytorch#191314).

Convention-based lazy registration of a PrivateUse1 DeviceInterface.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.base import TORCH_2_11_0, TORCH_2_13_0, TORCH_2_15_0
from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="lazy_reg",
    package=__name__,
    bases=(TORCH_2_15_0, TORCH_2_13_0, TORCH_2_11_0),
    requires=("shared",),
    stack_after=("rfc3", "rfc3_followup"),
    title="Convention-based lazy registration of a PrivateUse1 DeviceInterface",
)
