"""Lint a slice's patches with PyTorch's own settings.

A series goes upstream, so the lines it adds must pass PyTorch's linters: for
each slice (applied with the slices it requires), the files it touches are
checked with ruff under PyTorch's settings (``pytorch_ruff.toml``), before and
after the slice; a diagnostic the slice adds is an error, one that was there
before is not its business. Files the slice creates must also be formatted as
``ruff format`` (PyTorch's formatter for its Python) leaves them.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..overlay import Overlay
from ..overlay.slices import Slice


SETTINGS = Path(__file__).with_name("pytorch_ruff.toml")


def _ruff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--config", str(SETTINGS), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def _diagnostics(tree: Path, paths: Sequence[str]) -> collections.Counter[tuple[str, str, str]]:
    present = [p for p in paths if (tree / p).is_file()]
    if not present:
        return collections.Counter()
    done = _ruff("check", "--output-format", "json", "--exit-zero", *present, cwd=tree)
    if done.returncode:
        raise RuntimeError(f"ruff failed: {done.stderr.strip()}")
    return collections.Counter(
        (str(Path(d["filename"]).relative_to(tree)), d["code"] or "", d["message"])
        for d in json.loads(done.stdout)
    )


def lint_slice(stack: Sequence[Slice], torch_dir: Path) -> list[str]:
    """Problems the last slice of ``stack`` adds to the files it touches
    (``stack``: the slice after the slices it requires, in stack order)."""
    *deps, target = stack
    before = Overlay.build(deps, torch_dir).files if deps else {}
    after = Overlay.build(stack, torch_dir).files
    touched = sorted(p for p, f in after.items() if target.name in f.slices)
    created = [p for p in touched if p not in before and not (torch_dir.parent / p).exists()]
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        old_tree, new_tree = Path(tmp, "before"), Path(tmp, "after")
        for tree, files in ((old_tree, before), (new_tree, after)):
            for path in touched:
                target_file = tree / path
                target_file.parent.mkdir(parents=True, exist_ok=True)
                if path in files:
                    target_file.write_text(files[path].text, encoding="utf-8")
                elif tree is old_tree and (torch_dir.parent / path).is_file():
                    target_file.write_text(
                        (torch_dir.parent / path).read_text(encoding="utf-8"), encoding="utf-8"
                    )
        added = _diagnostics(new_tree, touched) - _diagnostics(old_tree, touched)
        problems += [f"{path}: {code} {message}" for (path, code, message) in sorted(added)]
        if created:
            done = _ruff("format", "--diff", *created, cwd=new_tree)
            if done.returncode:
                lines = done.stdout.splitlines()
                unformatted = sorted({line[4:] for line in lines if line.startswith("--- ")})
                problems += [f"{p}: not formatted as ruff format leaves it" for p in unformatted]
    return problems
