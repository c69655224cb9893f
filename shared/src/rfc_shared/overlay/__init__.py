"""The overlay engine: torch served patched by the selected slices, in memory.

- :mod:`.base`: the torch releases a series is written against, read without
  importing torch.
- :mod:`.slices`: what one slice declares.
- :mod:`.roster`: the installed slices as one object (built once per
  process from the entry points): stack order, selections, matrix columns,
  probe ownership, declared process state.
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
