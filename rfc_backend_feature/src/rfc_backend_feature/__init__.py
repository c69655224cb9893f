"""Slice ``backend_feature`` (pytorch/pytorch#191317).

BackendFeature as the framework-wide capability interface.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="backend_feature",
    package=__name__,
    requires=("registry_core", "rfc1"),
    stack_after=("lazy_reg",),
    title="BackendFeature as the framework-wide capability interface",
    issue="#191317",
    summary="`BackendFeature` as the framework-wide capability set",
)
