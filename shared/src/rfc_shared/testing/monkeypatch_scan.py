"""Find monkeypatches of torch and Triton in a backend's Python source.

A backend compiles with zero monkeypatching when it reaches torch.compile through
public extension points only. This scan checks that: it parses every .py file at
or under the paths it is given (it never imports them; hidden folders such as
.venv are skipped) and reports each write to an object whose name resolves to
torch.* or triton.*, through any import alias:

- attribute assignment, augmented assignment or del: torch.utils.foo = 2
- item assignment, augmented assignment or del: triton.backends.backends["x"] = ...
- setattr or delattr on such an object
- a mutating container method: GPU_TYPES.append("x"), .extend, .insert, .update,
  .add, .pop, .clear, .__setitem__, ...
- augmented assignment to a name imported from torch: GPU_TYPES += ["x"]

Reading attributes and calling functions, public registration entries such as
torch.utils.rename_privateuse1_backend or register_backend_for_device included,
are not patches, and neither are writes to the compile in progress (V.graph,
V.kernel) or to torch's statistics. An object the scan cannot name statically (one
a call returned, a star import) it does not see.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from rfc_shared.testing.torch_writes import Finding, scan_source


__all__ = ["Finding", "main", "python_files", "scan_paths", "scan_source"]


def python_files(path: Path) -> list[Path]:
    """``path`` if it is a file, else the ``.py`` files under it outside hidden folders.

    Raises:
        FileNotFoundError: ``path`` does not exist.
    """
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or directory")
    return sorted(
        file
        for file in path.rglob("*.py")
        if not any(part.startswith(".") for part in file.relative_to(path).parts)
    )


def scan_paths(paths: Iterable[Path]) -> Iterator[Finding]:
    """Every monkeypatch in the ``.py`` files at or under ``paths``.

    Raises:
        FileNotFoundError: A path does not exist.
        SyntaxError: A file is not Python.
    """
    for path in paths:
        for file in python_files(path):
            yield from scan_source(file.read_text(encoding="utf-8"), file)


def main(argv: Sequence[str] | None = None) -> int:
    """Scans the paths on the command line, printing each finding.

    Args:
        argv: The arguments (default: the command line's).

    Returns:
        0 when nothing is patched, 1 when something is, 2 on bad usage or a file that
        is not Python.
    """
    parser = argparse.ArgumentParser(
        prog="python -m rfc_shared.testing.monkeypatch_scan",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit status:\n  0  nothing is patched\n  1  monkeypatches found, one line each\n"
        "  2  bad usage, or a file that is not Python",
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="package folder or file"
    )
    args = parser.parse_args(argv)
    try:
        files = [file for path in args.paths for file in python_files(path)]
    except FileNotFoundError as e:
        parser.error(str(e))
    if not files:
        parser.error(f"no .py files in {', '.join(map(str, args.paths))}")
    findings: list[Finding] = []
    unreadable = 0
    for file in files:
        try:
            findings += scan_source(file.read_text(encoding="utf-8"), file)
        except SyntaxError as e:
            print(f"error: {file}:{e.lineno}: not Python: {e.msg}", file=sys.stderr)
            unreadable += 1
        except UnicodeDecodeError as e:
            print(f"error: {file}: not UTF-8: {e.reason}", file=sys.stderr)
            unreadable += 1
    for finding in findings:
        print(finding)
    patches = "monkeypatch" if len(findings) == 1 else "monkeypatches"
    print(
        f"{_files(len(files))} scanned: {len(findings) or 'no'} {patches} of torch or Triton",
        file=sys.stderr,
    )
    return 2 if unreadable else 1 if findings else 0


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


if __name__ == "__main__":
    sys.exit(main())
