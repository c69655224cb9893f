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
SYMBOLS = {"pass": "pass", "fail": "FAIL", "error": "ERROR", "n/a": "n/a"}


def slice_columns(record: dict) -> list[str]:
    """The record's one-slice columns, in the order the matrix probed them
    (stack order): each slice with only the slices it requires."""
    seen: list[str] = []
    for cells in record["probes"].values():
        seen += [c for c in cells if c not in seen and c not in EDGES]
    return seen


def first_pass(cells: dict[str, str], columns: list[str]) -> str | None:
    """The first one-slice column that passes a site, else ``stacked`` if it
    passes there (a follow-up's site), else None."""
    found = next((c for c in columns if cells.get(c) == "pass"), None)
    return found or ("stacked" if cells.get("stacked") == "pass" else None)


def answer(cells: dict[str, str], columns: list[str]) -> str:
    """What a site is on stock torch and, where it does not pass there, the
    first column that passes it."""
    stock = cells.get("stock")
    if stock in ("pass", "n/a"):
        return stock
    first = first_pass(cells, columns)
    word = SYMBOLS.get(stock or "", "-")
    return f"{word}: `{first}`" if first else f"{word} in every column"


def render(host: dict, gpu: dict) -> str:
    """The tables, in Markdown, from the two matrices' records."""
    records = {"host": host, "gpu": gpu}
    columns = slice_columns(host)
    lines = [
        f"Probed on torch {host['torch']}: each site's answer on stock torch and, where it does "
        "not pass there, the first slice column that passes it (that slice with the slices it "
        "requires; `stacked`: a follow-up's site).",
        "",
        f"| site | {CLASSES['host']} | {CLASSES['gpu']} |",
        "|---|---|---|",
    ]
    for probe in host["probes"]:
        cells = [answer(records[k]["probes"].get(probe, {}), columns) for k in CLASSES]
        lines.append(f"| `{probe}` | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "What each slice adds, in stack order, to stock torch and the slices before it:",
        "",
        f"| slice | {CLASSES['host']} | {CLASSES['gpu']} |",
        "|---|---|---|",
    ]
    for column in [*columns, "stacked"]:
        cells = []
        for k in CLASSES:
            gained = [
                probe
                for probe, c in records[k]["probes"].items()
                if c.get("stock") not in ("pass", "n/a") and first_pass(c, columns) == column
            ]
            cells.append(", ".join(f"`{p}`" for p in gained) or "nothing")
        lines.append(f"| `{column}` | {cells[0]} | {cells[1]} |")
    lines += ["", "Compiling the corpus on stock torch, in the probe's words:", ""]
    for k, name in CLASSES.items():
        cells = records[k]["probes"].get("rfc3.e2e_compile", {})
        why = records[k].get("evidence", {}).get("rfc3.e2e_compile", {}).get("stock", "")
        lines.append(f"- {name}: {SYMBOLS.get(cells.get('stock', ''), '-')}: {why}")
    lines += ["", "Where a site is `n/a` with every slice applied, why:", ""]
    for k, name in CLASSES.items():
        for probe, cells in records[k]["probes"].items():
            if cells.get("stacked") == "n/a":
                why = records[k].get("evidence", {}).get(probe, {}).get("stacked", "")
                lines.append(f"- {name}, `{probe}`: {why}")
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
