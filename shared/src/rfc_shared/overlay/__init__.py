"""The overlay engine: torch served patched by the selected slices, in memory.

- :mod:`.base`: the torch releases a series is written against, read without
  importing torch.
- :mod:`.slices`: slice declarations, their discovery through entry points,
  resolution and stack order.
- :mod:`.patchfile`, :mod:`.applier`: ``git format-patch`` files and the
  fuzz-free hunk applier.
- :mod:`.activation`: the built :class:`Overlay` and the process-wide
  activation.
- :mod:`.finder`: the ``sys.meta_path`` finder that serves patched modules.
- :mod:`.cachedirs`: Inductor's cache kept apart per series.
"""

from .activation import (
    ACTIVATION,
    Activation,
    Overlay,
    OverlayError,
    PatchApplyError,
    PatchedFile,
    activate,
    activate_on_torch_import,
    active,
    deactivate,
    report,
)


__all__ = [
    "ACTIVATION",
    "Activation",
    "Overlay",
    "OverlayError",
    "PatchApplyError",
    "PatchedFile",
    "activate",
    "activate_on_torch_import",
    "active",
    "deactivate",
    "report",
]
