"""``TORCH_RFC_SLICES``: the one variable that selects what the overlay serves.

Read at interpreter start by the startup hook, so this module imports nothing.

- unset, empty or ``all``: every installed slice;
- ``none``: stock torch (the overlay stays out of the import system);
- ``rfc1,rfc3``: those slices and the slices they require.
"""

from __future__ import annotations

import os


ENV = "TORCH_RFC_SLICES"
ALL = "all"
NONE = "none"


class SelectionError(ValueError):
    """A ``TORCH_RFC_SLICES`` value that names no slice."""


def parse(value: str | None) -> list[str] | None:
    """The slice names a ``TORCH_RFC_SLICES`` value selects.

    Returns:
        None for every installed slice, ``[]`` for stock torch, otherwise the
        names in the order given.

    Raises:
        SelectionError: a value such as ``","`` that names nothing.
    """
    value = (value or "").strip()
    if value.lower() in ("", ALL):
        return None
    if value.lower() == NONE:
        return []
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise SelectionError(f"{ENV}={value!r} names no slice")
    return names


def stock_requested(environ: dict[str, str] | None = None) -> bool:
    """Whether the environment asks for stock torch (``TORCH_RFC_SLICES=none``)."""
    value = (os.environ if environ is None else environ).get(ENV, "")
    return value.strip().lower() == NONE


def current() -> list[str] | None:
    """What this process's environment selects (see :func:`parse`)."""
    return parse(os.environ.get(ENV))
