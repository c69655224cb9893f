"""A device config module of the probe's own (``register_backend_for_device(...,
device_custom_config=...)``), registered for a backend that has none, so that
the routing of ``torch.compile(options={"<device>.<key>": v})`` can be probed
on any backend."""

import sys

from torch.utils._config_module import install_config_module


# An option that changes nothing.
probe_option: bool = False


install_config_module(sys.modules[__name__])
