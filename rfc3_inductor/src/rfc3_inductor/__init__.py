"""Slice ``rfc3`` (pytorch/pytorch#189137).

Inductor discovers, configures, compiles and runs a PrivateUse1 backend.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.base import TORCH_2_11_0, TORCH_2_13_0, TORCH_2_15_0
from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="rfc3",
    package=__name__,
    bases=(TORCH_2_15_0, TORCH_2_13_0, TORCH_2_11_0),
    requires=("shared", "rfc1"),
    stack_after=("rfc2",),
    title="Inductor discovers, configures, compiles and runs a PrivateUse1 backend",
)
