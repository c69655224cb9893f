"""Slice ``lazy_reg`` (pytorch/pytorch#191314).

Convention-based lazy registration of a PrivateUse1 DeviceInterface.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="lazy_reg",
    package=__name__,
    requires=("registry_core",),
    stack_after=("rfc3", "static_launcher"),
    title="Convention-based lazy registration of a PrivateUse1 DeviceInterface",
    issue="#191314",
    summary=(
        "a backend's interface from `get_device_interface()` on its device module, "
        "without importing Dynamo"
    ),
)
