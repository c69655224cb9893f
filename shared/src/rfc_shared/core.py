"""The shared registry core as a slice: the PrivateUse1 registration
primitive in ``torch/_dynamo/device_interface.py`` that every other slice
builds on."""

from .base import TORCH_2_11_0, TORCH_2_13_0
from .slices import Slice


SLICE = Slice(
    name="shared",
    package="rfc_shared",
    bases=(TORCH_2_13_0, TORCH_2_11_0),
    title="PrivateUse1 registration primitive in the DeviceInterface registry",
)
