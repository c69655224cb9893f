"""``python -m rfc_shared.bench``: run the benchmark cases, write JSON, Markdown
and a PNG plot."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .cases import CASES
from .plot import render
from .runner import BenchError, as_json, markdown, merge, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rfc_shared.bench", description=__doc__)
    parser.add_argument("--cases", help=f"comma-separated, from: {', '.join(CASES)}")
    parser.add_argument("--rounds", type=int, default=5, help="A/B pairs per case")
    parser.add_argument("--out", type=Path, help="folder for bench.json, bench.md, bench.png")
    parser.add_argument(
        "--update",
        action="store_true",
        help="replace only the cases run in an existing --out/bench.json, keep the others",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one pair per case on the least work, no warm-up, nothing written: does every "
        "case still run? (CI runs this; its figures mean nothing)",
    )
    args = parser.parse_args(argv)
    if args.smoke and (args.out or args.update):
        parser.error("--smoke writes nothing: leave out --out and --update")
    names = args.cases.split(",") if args.cases else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    previous = args.out / "bench.json" if args.out else None
    if args.update and (previous is None or not previous.exists()):
        parser.error("--update needs an existing bench.json in --out")
    try:
        report = run(
            [CASES[n] for n in names],
            1 if args.smoke else args.rounds,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            smoke=args.smoke,
        )
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.update:
        report = merge(json.loads(previous.read_text(encoding="utf-8")), report)
    table = markdown(report)
    print(table)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench.json").write_text(as_json(report), encoding="utf-8")
        (args.out / "bench.md").write_text(table, encoding="utf-8")
        render(report, args.out / "bench.png")
        print(f"wrote {args.out}/bench.json, bench.md, bench.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
