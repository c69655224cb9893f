"""Slice ``rfc1`` (pytorch/pytorch#189135).

Device identity and capability through the DeviceInterface registry.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="rfc1",
    package=__name__,
    requires=("registry_core",),
    title="Device identity and capability through the DeviceInterface registry",
    issue="#189135",
    summary="device identity and capability: `is_gpu`, `GPU_TYPES`, `has_triton`, ...",
)
