"""The conformance matrix: one column per overlay configuration, each probed
in its own interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence

from .probes import PROBES


COLUMNS = ("stock", "shared", "rfc1", "rfc2", "rfc3", "lazy_reg", "backend_feature", "stacked")
SYMBOLS = {"pass": "pass", "fail": "FAIL", "error": "ERROR", None: "-"}

Matrix = dict[str, dict[str, dict[str, str]]]  # probe -> column -> {status, evidence}


def _selection(column: str) -> str:
    return {"stock": "none", "stacked": "all"}.get(column, column)


def probe_column(
    column: str, probes: Sequence[str] | None = None, env: dict[str, str] | None = None
) -> dict[str, dict[str, str]]:
    """Run the probes in a fresh interpreter with ``column``'s overlay."""
    command = [sys.executable, "-m", "rfc_shared.conformance", "--format", "json", "--evidence"]
    if probes:
        command += ["--probes", ",".join(probes)]
    full_env = {**os.environ, **(env or {}), "TORCH_RFC_SLICES": _selection(column)}
    done = subprocess.run(command, capture_output=True, text=True, env=full_env)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {p: {"status": "error", "evidence": tail} for p in (probes or PROBES)}
    report = json.loads(done.stdout)
    name = next(iter(next(iter(report["probes"].values())))) if report["probes"] else column
    return {
        probe: {"status": columns[name], "evidence": report["evidence"][probe][name]}
        for probe, columns in report["probes"].items()
    }


def build(
    columns: Sequence[str] = COLUMNS,
    probes: Sequence[str] | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> Matrix:
    matrix: Matrix = {p: {} for p in (probes or PROBES)}
    for number, column in enumerate(columns, 1):
        progress(f"probing column {column} ({number}/{len(columns)}) ...")
        for probe, outcome in probe_column(column, probes).items():
            matrix[probe][column] = outcome
    return matrix


def as_json(matrix: Matrix, evidence: bool = False) -> dict[str, object]:
    out: dict[str, object] = {
        "probes": {p: {c: o["status"] for c, o in cols.items()} for p, cols in matrix.items()}
    }
    if evidence:
        out["evidence"] = {
            p: {c: o["evidence"] for c, o in cols.items()} for p, cols in matrix.items()
        }
    return out


def _columns_of(matrix: Matrix) -> list[str]:
    seen: list[str] = []
    for cols in matrix.values():
        seen += [c for c in cols if c not in seen]
    return seen


def as_text(matrix: Matrix) -> str:
    columns = _columns_of(matrix)
    width = max(len(p) for p in matrix)
    lines = [f"{'probe':<{width}}  " + "  ".join(f"{c:>15}" for c in columns)]
    for probe, cols in matrix.items():
        cells = "  ".join(f"{SYMBOLS[cols.get(c, {}).get('status')]:>15}" for c in columns)
        lines.append(f"{probe:<{width}}  {cells}")
    return "\n".join(lines)


def as_markdown(matrix: Matrix) -> str:
    columns = _columns_of(matrix)
    head = "| probe | what it checks | " + " | ".join(columns) + " |"
    rule = "|---|---|" + "---|" * len(columns)
    rows = [head, rule]
    for probe, cols in matrix.items():
        cells = " | ".join(SYMBOLS[cols.get(c, {}).get("status")] for c in columns)
        rows.append(f"| `{probe}` | {PROBES[probe].summary} | {cells} |")
    rows += ["", "Evidence, stock torch and the most complete column:", ""]
    last = columns[-1]
    for probe, cols in matrix.items():
        rows.append(f"- `{probe}`")
        for column in dict.fromkeys(("stock", last)):
            if column in cols:
                rows.append(f"  - {column}: {cols[column]['evidence']}")
    return "\n".join(rows) + "\n"
