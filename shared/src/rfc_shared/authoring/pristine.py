"""Pristine Python sources of a torch release, for authoring and checking series.

The installed torch serves its own release. Any other release's sources come
from its wheel on the package index: downloaded once, only ``torch/**.py``
unpacked (never installed), kept per release under the cache folder
(``TORCH_RFC_PRISTINE_CACHE``, default ``~/.cache/torch-rfc/pristine``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..overlay.base import TorchBase, TorchNotFoundError, read_torch_base, torch_package_dir


class PristineSourcesError(RuntimeError):
    """The sources of a release cannot be fetched, or are not that release."""


def cache_root() -> Path:
    configured = os.environ.get("TORCH_RFC_PRISTINE_CACHE")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg) / "torch-rfc" / "pristine"


def sources_dir(base: TorchBase) -> Path:
    """A ``torch`` folder holding ``base``'s pristine ``.py`` files.

    Raises:
        PristineSourcesError: the wheel cannot be downloaded, or its
            ``version.py`` names another release.
    """
    try:
        installed = torch_package_dir()
        if read_torch_base(installed) == base:
            return installed
    except TorchNotFoundError:
        pass
    cached = cache_root() / base.series_dir_name / "torch"
    if (cached / "version.py").is_file():
        _check(cached, base)
        return cached
    _fetch(base, cached)
    return cached


def _check(folder: Path, base: TorchBase) -> None:
    found = read_torch_base(folder)
    if found != base:
        raise PristineSourcesError(f"{folder} holds {found}, not {base}")


def _fetch(base: TorchBase, dest: Path) -> None:
    print(
        f"fetching the sources of {base} from its wheel (once; the wheel is large) ...",
        file=sys.stderr,
        flush=True,
    )
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".fetch-") as tmp:
        wheels = Path(tmp) / "wheel"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                str(wheels),
                f"torch=={base.version}",
            ],
            capture_output=True,
            text=True,
        )
        found = sorted(wheels.glob("torch-*.whl"))
        if done.returncode or not found:
            raise PristineSourcesError(
                f"pip could not download the torch {base.version} wheel:\n"
                f"{done.stderr or done.stdout}"
            )
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(found[0]) as wheel:
            members = [m for m in wheel.namelist() if m.startswith("torch/") and m.endswith(".py")]
            wheel.extractall(unpacked, members)
        _check(unpacked / "torch", base)
        # Appears complete or not at all: a concurrent or interrupted fetch
        # never leaves a partial tree behind.
        shutil.move(unpacked / "torch", dest)
    print(f"unpacked {len(members)} source files to {dest}", file=sys.stderr, flush=True)
