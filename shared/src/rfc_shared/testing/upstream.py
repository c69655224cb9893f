"""The upstream tests a slice's patches carry, written out for pytest.

Each patch carries its tests as PyTorch does, under ``test/`` of the patched
tree; a torch installation has no ``test/`` folder, so the overlay keeps them
(:attr:`rfc_shared.overlay.Overlay.tests`) and this module writes them to a
folder per slice, ``<dest>/<slice>/test/...``, with a marker file naming the
slice. The pytest plugin reads the marker: these tests belong to that slice
(``--control`` requires them to fail on stock torch).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from rfc_shared.overlay import Overlay
from rfc_shared.overlay.slices import Slice


MARKER = "torch_rfc_slice.txt"


def write_upstream_tests(slices: Sequence[Slice], dest: Path) -> list[Path]:
    """Write the upstream tests of ``slices`` (in stack order, dependencies
    included) under ``dest``, replacing what was there.

    Returns:
        One folder per slice that carries tests, in stack order.
    """
    overlay = Overlay.build(slices)
    if dest.exists():
        shutil.rmtree(dest)
    roots: dict[str, Path] = {}
    for path, patched in sorted(overlay.tests.items()):
        if not patched.is_new:
            continue  # upstream's own test, changed by a patch: see write_landed_tests
        owner = patched.slices[0]  # the slice whose patch created the file
        root = roots.setdefault(owner, dest / owner)
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(patched.text, encoding="utf-8")
    for owner, root in roots.items():
        (root / MARKER).write_text(owner + "\n", encoding="utf-8")
    order = [s.name for s in slices]
    return [roots[name] for name in order if name in roots]


def slice_of_upstream_test(path: Path) -> str | None:
    """The slice whose patches carry the test file at ``path``, if any."""
    for folder in path.parents:
        marker = folder / MARKER
        if marker.is_file():
            return marker.read_text(encoding="utf-8").strip()
    return None


def write_landed_tests(slices: Sequence[Slice], dest: Path) -> Path:
    """Write upstream's tests of the landed decisions under ``dest``
    (``dest/test/...``), as the selected ``slices`` leave them, replacing what
    was there. With no slices, as upstream ships them.

    Returns:
        ``dest``.
    """
    from rfc_shared.overlay.base import installed_torch_base

    base = installed_torch_base()
    patched = Overlay.build(slices).tests if slices else {}
    if dest.exists():
        shutil.rmtree(dest)
    for source in sorted(base.landed_tests_dir.rglob("*.py")):
        path = source.relative_to(base.landed_tests_dir).as_posix()
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        text = patched[path].text if path in patched else source.read_text(encoding="utf-8")
        target.write_text(text, encoding="utf-8")
    return dest
