"""Slice ``backend_feature`` (pytorch/pytorch#191317), and its follow-up
``fake_channels_last``.

BackendFeature as the framework-wide capability interface.

The change itself is the patch series in ``patches/``; the fake tensor
layout of the PrivateUse1 backend's convolutions, which is not #191317's ask
and goes to the fake tensor and ATen owners, is the follow-up series in
``followups/fake_channels_last/``, reviewed and exported on its own. This
module only declares both to the overlay.
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

FAKE_CHANNELS_LAST = Slice(
    name="fake_channels_last",
    package=__name__,
    # BackendFeature, _has_framework_feature() and the registry's
    # _clear_registry_caches() hook come from these.
    requires=("registry_core", "rfc1", "backend_feature"),
    title=(
        "Fake tensors lay out the PrivateUse1 backend's convolutions channels-last "
        "when it declares BackendFeature.CHANNELS_LAST_CONVOLUTION"
    ),
    patches_folder="followups/fake_channels_last",
    followup_of="backend_feature",
    issue="beyond #191317",
    summary=(
        "fake tensors: channels-last convolutions of the PrivateUse1 backend, by "
        "`BackendFeature.CHANNELS_LAST_CONVOLUTION`"
    ),
)
