"""``python -m rfc_shared.conformance``: probe the installed PrivateUse1 backend.

Without ``--matrix`` the probes run against the overlay this interpreter
serves (``TORCH_RFC_SLICES``). With ``--matrix`` the probe runs itself once
per column: stock torch, each slice alone, all slices stacked.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import matrix as matrices
from .probes import PROBES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rfc_shared.conformance", description=__doc__)
    parser.add_argument("--matrix", action="store_true", help="stock, each slice, stacked")
    parser.add_argument("--columns", help="comma-separated matrix columns (default: all)")
    parser.add_argument("--probes", help="comma-separated probe names (default: all)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--evidence", action="store_true", help="include evidence in JSON")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown")
    parser.add_argument("--list", action="store_true", help="list the probes and exit")
    args = parser.parse_args(argv)

    if args.list:
        for probe in PROBES.values():
            print(f"{probe.name:<32} {probe.summary}")
        return 0
    probes = args.probes.split(",") if args.probes else None
    if args.matrix:
        columns = args.columns.split(",") if args.columns else matrices.COLUMNS
        table = matrices.build(
            columns, probes, progress=lambda line: print(line, file=sys.stderr, flush=True)
        )
    else:
        from .runner import column_name, run_all

        column = column_name() if not args.columns else args.columns
        outcomes = run_all(probes)
        column = column_name()
        table = {
            name: {column: {"status": o.status, "evidence": o.evidence}}
            for name, o in outcomes.items()
        }
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(matrices.as_markdown(table), encoding="utf-8")
    if args.format == "json":
        print(json.dumps(matrices.as_json(table, evidence=args.evidence), indent=1))
    else:
        print(matrices.as_text(table))
        if not args.matrix:
            for name, cols in table.items():
                for outcome in cols.values():
                    print(f"  {name}: {outcome['evidence']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
