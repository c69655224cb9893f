"""The guide's minimal backends (``docs/examples``) as the docs tests run them
(fixture ``minimal``): built into the docs build's folder, each command in a
fresh interpreter.

``install.py`` builds again only when the sources it is given differ from the
ones built there, so the tests and the docs build share one build.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest


DOCS = Path(__file__).resolve().parents[1]
EXAMPLES = DOCS / "examples"
SITE = DOCS / "_build" / "examples"


def build(examples: Path = EXAMPLES) -> None:
    """The examples in ``examples`` (default: the repository's), built into SITE."""
    subprocess.run([sys.executable, examples / "install.py", SITE], check=True)


def environment() -> dict[str, str]:
    """The packages from SITE, kernels interpreted, no compile cache (each
    compile is the backend's as it is now), no backend named for the probe."""
    env = {k: v for k, v in os.environ.items() if k != "TORCH_RFC_BACKEND"}
    env.update(PYTHONPATH=str(SITE), TRITON_INTERPRET="1", TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    return env


def side_by_side(
    commands: dict[str, list[str]], envs: dict[str, dict[str, str]] | None = None
) -> dict[str, tuple[int, str, str]]:
    """Each command's Python arguments run with ``-P`` (the packages come from
    SITE, as built, not from beside a script), two at a time for two cores,
    in :func:`environment` or the one ``envs`` gives its name:
    name -> (returncode, stdout, stderr)."""
    found: dict[str, tuple[int, str, str]] = {}
    running: dict[str, subprocess.Popen[str]] = {}

    def finish(name: str) -> None:
        process = running.pop(name)
        out, err = process.communicate(timeout=600)
        found[name] = (process.returncode, out, err)

    for name, args in commands.items():
        if len(running) == 2:
            finish(next(iter(running)))
        running[name] = subprocess.Popen(
            [sys.executable, "-P", *args],
            env=(envs or {}).get(name) or environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    for name in list(running):
        finish(name)
    return found


@pytest.fixture(scope="session")
def minimal() -> SimpleNamespace:
    """This module's paths and functions, for the tests of the minimal backends."""
    return SimpleNamespace(
        examples=EXAMPLES,
        site=SITE,
        build=build,
        environment=environment,
        side_by_side=side_by_side,
    )
