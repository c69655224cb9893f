"""Slice ``graph_capture``: graph capture for ``torch.compile(mode="reduce-overhead")``
through the DeviceInterface registry.

Beyond the seed RFC family (pytorch/pytorch#189138): a registry gap the
seed's sub-RFCs do not cover. Related upstream threads: pytorch/pytorch#132856,
#193803, #194598, #180168, #197866.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="graph_capture",
    package=__name__,
    requires=("registry_core", "rfc1", "backend_feature"),
    # Both patch device_interface.py's DeviceInterface: the follow-up first.
    stack_after=("fake_channels_last",),
    title='Graph capture (mode="reduce-overhead") through the DeviceInterface registry',
    issue="beyond the seed, #193803",
    summary='`mode="reduce-overhead"` for any device whose interface declares graph capture',
)
