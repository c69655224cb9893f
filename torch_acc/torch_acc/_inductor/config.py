"""acc's Inductor options, the ``acc.*`` namespace of ``torch.compile(options=...)``.

Registered as acc's ``device_custom_config``, so they are part of the FX graph
cache key.
"""

import sys

from torch.utils._config_module import install_config_module


# Emit, at the top of every compiled graph, a check that each tensor input is
# on an acc device: a graph compiled for acc fails loudly, not with a bad
# pointer, when called with tensors from another device.
check_input_devices: bool = False


install_config_module(sys.modules[__name__])
