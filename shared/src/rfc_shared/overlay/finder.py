"""Serve patched ``torch`` modules from memory.

The module keeps the pristine file's path as ``__file__`` and ``co_filename``
(Dynamo's skip rules and Inductor's path logic read them), and its patched
text is what :mod:`linecache` returns for that path, so tracebacks and
:func:`inspect.getsource` show the lines that actually run.

Compiled code is cached on disk keyed by the patched text, never next to the
pristine file: the stock ``__pycache__`` keeps serving stock torch.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import marshal
import os
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path
from types import CodeType, ModuleType


def bytecode_cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "torch-rfc" / "bytecode"


class PatchedSourceLoader(importlib.machinery.SourceFileLoader):
    """A file loader whose source is given, not read from the file."""

    def __init__(self, fullname: str, path: str, source: str) -> None:
        super().__init__(fullname, path)
        self._source = source

    def get_source(self, fullname: str) -> str:
        return self._source

    def get_code(self, fullname: str) -> CodeType:
        key = hashlib.sha256(
            importlib.util.MAGIC_NUMBER + self.path.encode() + b"\0" + self._source.encode()
        ).hexdigest()
        cached = bytecode_cache_dir() / f"{key}.bin"
        try:
            return marshal.loads(cached.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            pass
        code = compile(self._source, self.path, "exec", dont_inherit=True)
        write_atomic(cached, marshal.dumps(code))
        return code

    def exec_module(self, module: ModuleType) -> None:
        _remember_source(self.path, self._source)
        super().exec_module(module)


def write_atomic(path: Path, data: bytes) -> None:
    """Best effort: a read-only or full cache only costs a recompile."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


# Patched sources by filename. ``linecache.checkcache`` keeps entries whose
# mtime is None, but ``linecache.clearcache`` drops everything (Inductor calls
# it when it loads generated kernels), after which linecache would read the
# pristine file from disk. The wrapper below puts the patched text back.
_sources: dict[str, tuple[int, None, list[str], str]] = {}
_stdlib_clearcache = linecache.clearcache


def _remember_source(filename: str, source: str) -> None:
    entry = (len(source), None, source.splitlines(keepends=True), filename)
    _sources[filename] = entry
    linecache.cache[filename] = entry
    if linecache.clearcache is _stdlib_clearcache:
        linecache.clearcache = _clearcache_keeping_overlay


def _clearcache_keeping_overlay() -> None:
    _stdlib_clearcache()
    linecache.cache.update(_sources)


def forget_sources(filenames: Collection[str]) -> None:
    """Drop the patched sources of ``filenames`` that linecache holds (a
    deactivated overlay's, but for its modules still imported, whose
    tracebacks must show the code that runs); with none left,
    ``linecache.clearcache`` is the stdlib's again."""
    for filename in [f for f in _sources if f in filenames]:
        del _sources[filename]
        linecache.cache.pop(filename, None)
    if not _sources and linecache.clearcache is _clearcache_keeping_overlay:
        linecache.clearcache = _stdlib_clearcache


class OverlayFinder(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder for the modules an overlay patches.

    Args:
        site_dir: The folder that contains the ``torch`` package.
        modules: Module name to ``(repository-relative path, patched source)``.
    """

    def __init__(self, site_dir: Path, modules: Mapping[str, tuple[str, str]]) -> None:
        self._site_dir = site_dir
        self._modules = dict(modules)

    def filename(self, fullname: str) -> str:
        """The file module ``fullname`` is served as."""
        return str(self._site_dir / self._modules[fullname][0])

    def find_spec(
        self,
        fullname: str,
        path: object = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        entry = self._modules.get(fullname)
        if entry is None:
            return None
        relpath, source = entry
        filename = str(self._site_dir / relpath)
        is_package = relpath.endswith("/__init__.py")
        spec = importlib.util.spec_from_file_location(
            fullname,
            filename,
            loader=PatchedSourceLoader(fullname, filename, source),
            submodule_search_locations=[os.path.dirname(filename)] if is_package else None,
        )
        if spec is not None:
            spec.cached = None  # the stock __pycache__ entry is not this code
        return spec
