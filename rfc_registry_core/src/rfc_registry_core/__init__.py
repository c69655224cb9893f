"""Slice ``registry_core`` (pytorch/pytorch#189138): the registry core.

The PrivateUse1 registration primitive in ``torch/_dynamo/device_interface.py``
that every other slice builds on.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.slices import ProcessState, Slice


SLICE = Slice(
    name="registry_core",
    package=__name__,
    title="PrivateUse1 registration primitive in the DeviceInterface registry",
    issue="#189138",
    summary="the PrivateUse1 registration primitive every slice builds on",
    # The registry's tuple of registrations and the caches derived from it
    # (GPU_TYPES' rescan, rfc2's trace-rule table) are rebuilt from the
    # registry, which a snapshot restores in place.
    process_state=(
        ProcessState("torch._dynamo.device_interface", rebuild="_clear_registry_caches"),
    ),
)
