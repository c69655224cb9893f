"""``python -m rfc_shared.conformance``: probe a PrivateUse1 backend.

Without ``--matrix`` the probes run against the overlay this interpreter
serves (``TORCH_RFC_SLICES``). With ``--matrix`` the probe runs itself once
per column: stock torch, each installed slice alone, all slices stacked.
The backend under test is the package ``--backend`` names (default:
``TORCH_RFC_BACKEND``, else the backend the process already has); the matrix
passes it to each column's interpreter as ``--backend``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import evidence
from . import matrix as matrices
from .backend import UnusableBackend, backend_package, choose_backend, resolve
from .probes import load


def _installed_base() -> str:
    from rfc_shared.overlay.base import installed_torch_base

    return installed_torch_base().version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rfc_shared.conformance", description=__doc__)
    parser.add_argument("--backend", help="package of the backend under test (e.g. torch_acc)")
    parser.add_argument("--base", help="refuse to run unless the installed torch is this release")
    parser.add_argument("--matrix", action="store_true", help="stock, each slice, stacked")
    parser.add_argument("--columns", help="comma-separated matrix columns (with --matrix)")
    parser.add_argument("--probes", help="comma-separated probe names (default: all)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--evidence", action="store_true", help="include evidence in JSON")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown")
    parser.add_argument("--json", type=Path, help="also write the table, with evidence, as JSON")
    parser.add_argument("--list", action="store_true", help="list the probes and exit")
    parser.add_argument(
        "--require-alone",
        action="store_true",
        help="exit 1 unless each slice's probes pass (or are n/a) in that slice's own column "
        "(with --matrix): every slice works alone, with only the slices it requires",
    )
    args = parser.parse_args(argv)

    if args.columns and not args.matrix:
        parser.error("--columns selects matrix columns: use it with --matrix")
    if args.require_alone and not args.matrix:
        parser.error("--require-alone reads each slice's own column: use it with --matrix")
    choose_backend(args.backend)
    package = backend_package()
    base = _installed_base()
    if args.base and args.base != base:
        parser.error(f"--base {args.base}: the installed torch is {base}")
    if args.list:
        for probe in load().values():
            print(f"{probe.name:<32} {probe.summary}")
        return 0
    try:  # at once, not in every column: a backend that cannot be probed
        resolve(package)
    except UnusableBackend as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    probes = args.probes.split(",") if args.probes else None
    if args.matrix:
        columns = args.columns.split(",") if args.columns else None
        table = matrices.build(
            columns,
            probes,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            backend=package,
        )
    else:
        from .runner import column_name, run_all

        outcomes = run_all(probes)
        column = column_name()
        table = {
            name: {column: {"status": o.status, "evidence": o.evidence}}
            for name, o in outcomes.items()
        }
    backend = package or "the process's PrivateUse1 backend"
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        title = f"Backend `{backend}` on torch {base}:"
        args.markdown.write_text(matrices.as_markdown(table, title), encoding="utf-8")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        record = {"torch": base, "backend": backend, **matrices.as_json(table, evidence=True)}
        args.json.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if args.format == "json":
        print(json.dumps(matrices.as_json(table, evidence=args.evidence), indent=1))
    else:
        print(matrices.as_text(table))
        if found := evidence.as_text(table):
            print(found)
    if args.require_alone and (broken := matrices.failing_alone(table)):
        print(
            "slices that do not work alone (their own probe fails in their own column):\n"
            + "".join(f"  {line}\n" for line in broken),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
