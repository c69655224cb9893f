"""Command line: ``python -m rfc_shared <command>`` (status, materialize,
upstream-tests, workspace, refresh, check-series, check-surface, lint-series, tables,
export)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import selection


if TYPE_CHECKING:
    from .overlay.base import TorchBase
    from .overlay.roster import Roster


def _status(args: argparse.Namespace) -> int:
    from . import overlay
    from .overlay.base import installed_torch_base

    if args.import_torch:
        import torch  # noqa: F401  (activates the overlay the environment selects)
    info = overlay.report()
    info["installed_torch"] = str(installed_torch_base())
    print(json.dumps(info, indent=2))
    if args.expect_closure is not None:
        wanted = selection.parse(args.expect_closure)
        served = [s["name"] for s in info["slices"]]
        expected = [s.name for s in installed().select(wanted, installed_torch_base())]
        if served != expected:
            print(
                f"error: the overlay serves {served or 'stock torch'}, expected "
                f"{expected or 'stock torch'}",
                file=sys.stderr,
            )
            return 1
    return 0


def _materialize(args: argparse.Namespace) -> int:
    from .authoring import materialize
    from .overlay.base import installed_torch_base

    names = selection.parse(args.slices) if args.slices else selection.current()
    stack = installed().select(names, installed_torch_base())
    changed = materialize(args.dest, stack)
    print(
        f"wrote the torch tree with {', '.join(s.name for s in stack) or 'no slices'} "
        f"applied to {args.dest}; {len(changed)} file(s) patched:"
    )
    for path in changed:
        print(f"  {path}")
    return 0


def _upstream_tests(args: argparse.Namespace) -> int:
    from .overlay.base import installed_torch_base
    from .testing.upstream import write_landed_tests, write_upstream_tests

    names = selection.parse(args.slices) if args.slices else selection.current()
    stack = installed().select(names, installed_torch_base())
    if args.landed:
        print(write_landed_tests(stack, args.dest))
        return 0
    for folder in write_upstream_tests(stack, args.dest):
        print(folder)
    return 0


def installed() -> Roster:
    """The installed slices (``overlay.roster.installed``, cached for the
    process), imported when a command needs them so that ``--help`` and the
    commands that need none stay light."""
    from .overlay.roster import installed as installed_roster

    return installed_roster()


def _base(args: argparse.Namespace) -> TorchBase | None:
    from .overlay.base import known_base

    return known_base(args.base) if args.base else None


def _workspace(args: argparse.Namespace) -> int:
    from .authoring import project_root, workspace
    from .overlay.base import known_base

    dest = args.dest or project_root() / ".workspace" / args.slice
    print(f"seeding {dest} with pristine torch sources and the series ...", flush=True)
    port_from = known_base(args.port_from) if args.port_from else None
    workspace(args.slice, dest, roster=installed(), base=_base(args), port_from=port_from)
    print(
        f"workspace ready: {dest}\n"
        "  tags: base (pristine), deps (dependency slices applied); HEAD has the slice.\n"
        "  Edit and commit there (one commit per patch), then run:\n"
        f"  nox -s refresh -- {args.slice}{f' --base {args.base}' if args.base else ''}"
    )
    return 0


def _refresh(args: argparse.Namespace) -> int:
    from .authoring import project_root, refresh

    repo = args.workspace or project_root() / ".workspace" / args.slice
    for patch in refresh(args.slice, repo, roster=installed(), base=_base(args)):
        print(f"wrote {patch}")
    return 0


def _check_series(args: argparse.Namespace) -> int:
    from .authoring import check_series

    for line in check_series(roster=installed()):
        print(line, flush=True)
    return 0


def _check_surface(args: argparse.Namespace) -> int:
    from .authoring import project_root, source_roster
    from .authoring.surface import check_surface
    from .overlay.base import PRIMARY_BASE

    for line in check_surface(source_roster(project_root(), installed()), PRIMARY_BASE):
        print(line, flush=True)
    return 0


def _lint_series(args: argparse.Namespace) -> int:
    from .authoring import project_root, source_slices
    from .authoring.lint import lint_slice
    from .overlay.base import installed_torch_base, torch_package_dir

    root = project_root()
    roster = installed()
    names = args.slices.split(",") if args.slices else roster.on(installed_torch_base()).names()
    failed = 0
    for name in names:
        problems = lint_slice(source_slices(root, name, roster), torch_package_dir())
        print(f"{name}: {'clean' if not problems else f'{len(problems)} problem(s)'}")
        for problem in problems:
            print(f"  {problem}")
        failed += bool(problems)
    return 1 if failed else 0


def _export(args: argparse.Namespace) -> int:
    from .authoring import export, project_root

    out = args.out or project_root() / "dist" / "export"
    dest = export(args.slice, out, roster=installed())
    for patch in sorted(dest.glob("*.patch")):
        print(f"  {patch.name}")
    print(f"exported slice {args.slice} to {dest} (checked with git am on a pristine base)")
    return 0


def _tables(args: argparse.Namespace) -> int:
    from .authoring.tables import update

    changed = update(roster=installed(), check=args.check)
    for page in changed:
        print(f"{page.name}: {'stale' if args.check else 'rewritten'}")
    if args.check and changed:
        print("error: run `python -m rfc_shared tables` and commit the result", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rfc_shared", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("status", help="print what the overlay serves, as JSON")
    p.add_argument("--import-torch", action="store_true", help="import torch first")
    p.add_argument(
        "--expect-closure",
        metavar="SELECTION",
        help="fail unless the overlay serves exactly what this selection resolves to "
        f"(a {selection.ENV} value)",
    )
    p.set_defaults(run=_status)

    p = sub.add_parser("materialize", help="write the patched torch .py tree")
    p.add_argument("dest", type=Path)
    p.add_argument("--slices", help=f"comma-separated slices (default: {selection.ENV})")
    p.set_defaults(run=_materialize)

    p = sub.add_parser("upstream-tests", help="write the tests the selected slices' patches carry")
    p.add_argument("dest", type=Path)
    p.add_argument("--slices", help=f"comma-separated slices (default: {selection.ENV})")
    p.add_argument(
        "--landed",
        action="store_true",
        help="write upstream's tests of the decisions it landed instead, as the slices leave them",
    )
    p.set_defaults(run=_upstream_tests)

    p = sub.add_parser("workspace", help="git work tree to author a slice in")
    p.add_argument("slice")
    p.add_argument("--dest", type=Path)
    p.add_argument("--base", help="torch version to author against (default: installed)")
    p.add_argument(
        "--port-from",
        metavar="VERSION",
        help="port this base's series onto --base even if it has one (redo a port; "
        "default without it: the primary series, only when --base has none)",
    )
    p.set_defaults(run=_workspace)

    p = sub.add_parser("refresh", help="regenerate a slice's series from its workspace")
    p.add_argument("slice")
    p.add_argument("--workspace", type=Path)
    p.add_argument("--base", help="torch version the workspace is on (default: installed)")
    p.set_defaults(run=_refresh)

    p = sub.add_parser("check-series", help="apply every series to its base's sources")
    p.set_defaults(run=_check_series)

    p = sub.add_parser(
        "check-surface",
        help="check that each slice adds the same public surface on every base",
    )
    p.set_defaults(run=_check_surface)

    p = sub.add_parser(
        "lint-series", help="lint each slice's changes with PyTorch's own ruff settings"
    )
    p.add_argument(
        "--slices", help="comma-separated slices (default: all with a series for this torch)"
    )
    p.set_defaults(run=_lint_series)

    p = sub.add_parser("tables", help="write the slice tables of README.md and docs/index.md")
    p.add_argument("--check", action="store_true", help="only fail if they are stale")
    p.set_defaults(run=_tables)

    p = sub.add_parser("export", help="write a slice as a git-am-able series with tests")
    p.add_argument("slice")
    p.add_argument("--out", type=Path)
    p.set_defaults(run=_export)

    args = parser.parse_args(argv)
    from .overlay.slices import SliceError

    try:
        return args.run(args)
    except (SliceError, RuntimeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
