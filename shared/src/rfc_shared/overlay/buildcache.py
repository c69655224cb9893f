"""Keep built overlays on disk, so that ``import torch`` parses and applies a
series once, not in every interpreter.

Building the stacked overlay parses every patch and applies every hunk (about
a third of a second); a test run starts hundreds of interpreters with the same
selection. An entry is keyed by the overlay's series hash (the torch base and
every patch's bytes), the torch installation and the engine's own code that
parses and applies, and is used only while each pristine file it was built
from has the size and modification time it had.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable, Iterable
from pathlib import Path

from .finder import bytecode_cache_dir, write_atomic


# The engine's modules whose code decides what a build produces.
_ENGINE_FILES = ("activation.py", "applier.py", "patchfile.py")
_FORMAT = 1
#: How many built overlays are kept.
KEPT = 32

#: One patched file as stored: path, text, created by a patch, its slices.
Entry = tuple[str, str, bool, tuple[str, ...]]


def cache_dir() -> Path:
    """Where built overlays are kept, beside the patched modules' bytecode."""
    return bytecode_cache_dir().parent / "overlays"


def _key(series_hash: str, site_dir: Path) -> str:
    engine = hashlib.sha256(f"{_FORMAT}\0{site_dir}\0".encode())
    here = Path(__file__).parent
    for name in _ENGINE_FILES:
        engine.update((here / name).read_bytes())
    return f"{series_hash[:32]}-{engine.hexdigest()[:32]}"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def load(series_hash: str, site_dir: Path, pristine: Callable[[str], Path]) -> list[Entry] | None:
    """The files a build with ``series_hash`` produced on ``site_dir``, or
    None where there is no entry or a pristine file has changed since.
    ``pristine``: a patched path's pristine file (which may not exist). The
    series hash fixes which paths the series patch, so the entry's are
    those."""
    try:
        stored = marshal.loads((cache_dir() / f"{_key(series_hash, site_dir)}.bin").read_bytes())
        files, stamps = stored
        if any(_stamp(pristine(path)) != stamp for path, stamp in stamps):
            return None
        return [(path, text, is_new, tuple(slices)) for path, text, is_new, slices in files]
    except (OSError, EOFError, ValueError, TypeError):
        return None  # no entry, or one this code cannot read: build


def store(
    series_hash: str, site_dir: Path, files: Iterable[Entry], pristine: Callable[[str], Path]
) -> None:
    """Best effort: a cache that cannot be written costs the next build."""
    files = [list(f) for f in files]
    stamps = [(path, _stamp(pristine(path))) for path, *_ in files]
    write_atomic(cache_dir() / f"{_key(series_hash, site_dir)}.bin", marshal.dumps((files, stamps)))
    _prune()


def _prune() -> None:
    """Keep the :data:`KEPT` most recently written entries: each selection,
    torch and engine version writes one (the stack, a few megabytes)."""
    try:
        entries = sorted(cache_dir().glob("*.bin"), key=lambda e: e.stat().st_mtime_ns)
        for entry in entries[:-KEPT]:
            entry.unlink()
    except OSError:
        pass  # another process pruned first
