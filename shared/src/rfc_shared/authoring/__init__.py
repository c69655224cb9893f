"""Authoring tools: slices are edited through git, never by hand.

- :mod:`.workflow`: ``workspace`` (a git tree with the series as commits),
  ``refresh`` (commits back to a series), porting to another base,
  ``export`` and ``materialize``.
- :mod:`.series_check`: ``check_series``, each series applied to its base.
- :mod:`.pristine`: the pristine ``.py`` sources of a torch release.
"""

from .series_check import check_series
from .workflow import (
    AuthoringError,
    PortConflictError,
    duplicate_definitions,
    export,
    from_source,
    git,
    materialize,
    project_root,
    refresh,
    slice_source_dir,
    source_roster,
    source_slices,
    workspace,
)


__all__ = [
    "AuthoringError",
    "PortConflictError",
    "check_series",
    "duplicate_definitions",
    "export",
    "from_source",
    "git",
    "materialize",
    "project_root",
    "refresh",
    "slice_source_dir",
    "source_roster",
    "source_slices",
    "workspace",
]
