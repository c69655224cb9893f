"""Keep compiled artifacts of an overlaid torch apart from stock torch's.

Inductor's cache keys hash torch's files on disk, which the overlay leaves
untouched: without this, stock torch and every slice combination would share
(and poison) one FX graph and kernel cache. Triton's cache follows, because
Inductor places it under its own cache directory unless TRITON_CACHE_DIR is
set.
"""

from __future__ import annotations

import getpass
import os
import re
import tempfile


ENV_INDUCTOR = "TORCHINDUCTOR_CACHE_DIR"


def _user() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = f"uid_{os.getuid()}" if hasattr(os, "getuid") else "unknown_user"
    return re.sub(r'[\\/:*?"<>|]', "_", name)


def overlay_cache_dir(series_hash: str) -> str:
    """The Inductor cache directory of one overlay (one series hash)."""
    return os.path.join(tempfile.gettempdir(), f"torchinductor_{_user()}_rfc-{series_hash[:16]}")


def namespace(series_hash: str) -> dict[str, str]:
    """Point Inductor's cache at the overlay's own directory unless the user
    chose one. Returns the variables it set."""
    if os.environ.get(ENV_INDUCTOR):
        return {}
    os.environ[ENV_INDUCTOR] = overlay_cache_dir(series_hash)
    return {ENV_INDUCTOR: os.environ[ENV_INDUCTOR]}
