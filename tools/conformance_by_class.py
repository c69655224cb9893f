"""What stock torch gives each class of PrivateUse1 backend, and what each
slice adds: tables from the conformance matrices of the backend guide's two
minimal backends, ``minimal_host`` (host class: Inductor's C++ kernels) and
``minimal_gpu`` (GPU class: Triton kernels).

    python tools/conformance_by_class.py HOST.json GPU.json OUT.md

HOST.json and GPU.json are the records ``python -m rfc_shared.conformance
--backend <package> --matrix --json FILE`` writes; ``nox -s minimal-matrix``
makes both and calls this. OUT.md is Markdown the conformance page includes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


CLASSES = {"host": "host class (`mhost`)", "gpu": "GPU class (`mgpu`)"}
EDGES = ("stock", "stacked")


def slice_columns(record: dict) -> list[str]:
    """The record's one-slice columns, in the order the matrix probed them
    (stack order): each slice with only the slices it requires."""
    seen: list[str] = []
    for cells in record["probes"].values():
        seen += [c for c in cells if c not in seen and c not in EDGES]
    return seen


def added_by(cells: dict[str, str], columns: list[str]) -> str:
    """What a site is on stock torch and, where it does not pass there, the
    first column that passes it."""
    stock = cells.get("stock")
    if stock == "pass":
        return "pass"
    if stock == "n/a" and all(s == "n/a" for s in cells.values()):
        return "n/a"
    first = next((c for c in columns if cells.get(c) == "pass"), None)
    if first is None:
        first = "stacked" if cells.get("stacked") == "pass" else None
    stock_word = {"fail": "FAIL", "error": "ERROR"}.get(stock or "", stock or "-")
    return f"{stock_word}, `{first}` passes" if first else f"{stock_word} in every column"


def render(host: dict, gpu: dict) -> str:
    records = {"host": host, "gpu": gpu}
    columns = slice_columns(host)
    probes = list(host["probes"])
    lines = [
        f"Probed on torch {host['torch']}: each site's answer on stock torch and, where it does "
        "not pass there, the first slice column that passes it (the slice with the slices it "
        "requires).",
        "",
        f"| site | {CLASSES['host']} | {CLASSES['gpu']} |",
        "|---|---|---|",
    ]
    for probe in probes:
        cells = [added_by(records[k]["probes"].get(probe, {}), columns) for k in CLASSES]
        lines.append(f"| `{probe}` | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "What each slice adds to stock torch, alone with what it requires:",
        "",
        f"| slice | {CLASSES['host']} | {CLASSES['gpu']} |",
        "|---|---|---|",
    ]
    for column in columns:
        cells = []
        for k in CLASSES:
            gained = [
                p
                for p, c in records[k]["probes"].items()
                if c.get(column) == "pass" and c.get("stock") != "pass"
            ]
            cells.append(", ".join(f"`{p}`" for p in gained) or "nothing")
        lines.append(f"| `{column}` | {cells[0]} | {cells[1]} |")
    reasons = []
    for k, name in CLASSES.items():
        for probe, cells in records[k]["probes"].items():
            if cells.get("stacked") == "n/a":
                why = records[k].get("evidence", {}).get(probe, {}).get("stacked", "")
                reasons.append(f"- {name}, `{probe}`: {why}")
    if reasons:
        lines += ["", "Where a site is `n/a` with every slice applied, why:", "", *reasons]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    host, gpu = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv[:2])
    Path(argv[2]).write_text(render(host, gpu), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
