"""The conformance matrix: one column per overlay configuration, each probed
in its own interpreter, on the torch installed in this environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

from rfc_shared import selection
from rfc_shared.overlay.roster import Roster, installed

from .probes import load


SYMBOLS = {"pass": "pass", "fail": "FAIL", "error": "ERROR", "n/a": "n/a", None: "-"}

Matrix = dict[str, dict[str, dict[str, str]]]  # probe -> column -> {status, evidence}


def columns(roster: Roster | None = None) -> list[str]:
    """The columns for the installed torch (:meth:`Roster.columns`)."""
    from rfc_shared.overlay.base import installed_torch_base

    return (roster or installed()).columns(installed_torch_base())


def failing_alone(table: Matrix) -> list[str]:
    """Each probe that fails or errs in the column of the slice it belongs to
    (its name's prefix), as ``probe in column: status``: what a slice, applied
    with only the slices it requires, leaves broken. A probe whose slice has no
    column in ``table`` is not judged."""
    found = []
    for probe, cells in table.items():
        own = cells.get(probe.split(".", 1)[0])
        if own is not None and own["status"] in ("fail", "error"):
            found.append(f"{probe} in {probe.split('.', 1)[0]}: {SYMBOLS[own['status']]}")
    return found


def _column_env(column: str, kernel_cache: str | None, fresh: str) -> dict[str, str]:
    """The column's overlay, and Inductor's cache: an FX graph or AOTAutograd
    artifact another column compiled must not answer for this one (their keys
    hash torch's files on disk, which the overlay leaves as they are), so those
    caches are off; compiled kernels are keyed by their own source, which no
    column can change, so ``kernel_cache`` shares them across columns."""
    env = {**os.environ, selection.ENV: Roster.column_selection(column)}
    env["TORCHINDUCTOR_CACHE_DIR"] = kernel_cache or fresh
    if kernel_cache:
        env["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
        env["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    env.pop("TRITON_CACHE_DIR", None)  # under Inductor's
    return env


def probe_column(
    column: str,
    probes: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
    kernel_cache: str | None = None,
    backend: str | None = None,
) -> dict[str, dict[str, str]]:
    """Run the probes of ``backend`` (a package; None: the child's default)
    in a fresh interpreter with ``column``'s overlay (see :func:`_column_env`
    for what it shares with other columns)."""
    command = [sys.executable, "-m", "rfc_shared.conformance", "--format", "json", "--evidence"]
    if backend:
        command += ["--backend", backend]
    if probes:
        command += ["--probes", ",".join(probes)]
    with tempfile.TemporaryDirectory(prefix="rfc-conformance-") as fresh:
        full_env = {**_column_env(column, kernel_cache, fresh), **(env or {})}
        full_env[selection.ENV] = Roster.column_selection(column)
        done = subprocess.run(command, capture_output=True, text=True, env=full_env)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {p: {"status": "error", "evidence": tail} for p in (probes or load())}
    report = json.loads(done.stdout)
    name = next(iter(next(iter(report["probes"].values())))) if report["probes"] else column
    return {
        probe: {"status": cells[name], "evidence": report["evidence"][probe][name]}
        for probe, cells in report["probes"].items()
    }


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def progress_line(done: int, total: int, column: str, took: float, left: float) -> str:
    """``[3/9] rfc2 ... 41 s, about 2 min left``."""
    line = f"[{done}/{total}] {column} ... {_duration(took)}"
    if done < total:
        line += f", about {_duration(left)} left"
    return line


def estimate_left(durations: Sequence[float], left: int, workers: int) -> float:
    """Seconds until the last of ``left`` columns is done: the mean time of a
    column so far, ``workers`` columns at a time."""
    return sum(durations) / len(durations) * left / min(workers, max(left, 1))


def build(
    wanted: Sequence[str] | None = None,
    probes: Sequence[str] | None = None,
    progress: Callable[[str], None] = lambda line: None,
    workers: int | None = None,
    backend: str | None = None,
) -> Matrix:
    """One column per configuration in ``wanted`` (default: :func:`columns`),
    each probing ``backend`` (a package; None: each column's default).

    Columns are independent interpreters, so ``workers`` of them (default: one
    per CPU) run at once, sharing compiled kernels; the table keeps
    ``wanted``'s order.
    """
    wanted = columns() if wanted is None else list(wanted)
    workers = workers or os.cpu_count() or 1
    progress(f"probing {len(wanted)} columns, {workers} at a time ...")
    results: dict[str, dict[str, dict[str, str]]] = {}
    durations: list[float] = []

    def timed(column: str, kernel_cache: str) -> tuple[dict[str, dict[str, str]], float]:
        began = time.monotonic()
        outcome = probe_column(column, probes, kernel_cache=kernel_cache, backend=backend)
        return outcome, time.monotonic() - began

    with (
        tempfile.TemporaryDirectory(prefix="rfc-conformance-kernels-") as kernel_cache,
        ThreadPoolExecutor(max_workers=workers) as pool,
    ):
        # Stacked compiles the most: started first, it has compiled the kernels
        # by the time the other columns that generate them get there.
        order = sorted(wanted, key=lambda column: column != "stacked")
        pending = {pool.submit(timed, column, kernel_cache): column for column in order}
        for done in as_completed(pending):
            column = pending[done]
            results[column], took = done.result()
            durations.append(took)
            left = estimate_left(durations, len(wanted) - len(results), workers)
            progress(progress_line(len(results), len(wanted), column, took, left))
    matrix: Matrix = {p: {} for p in (probes or load())}
    for column in wanted:
        for probe, outcome in results[column].items():
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
    cols_seen = _columns_of(matrix)
    width = max(len(p) for p in matrix)
    lines = [f"{'probe':<{width}}  " + "  ".join(f"{c:>15}" for c in cols_seen)]
    for probe, cols in matrix.items():
        cells = "  ".join(f"{SYMBOLS[cols.get(c, {}).get('status')]:>15}" for c in cols_seen)
        lines.append(f"{probe:<{width}}  {cells}")
    return "\n".join(lines)


def as_markdown(matrix: Matrix, title: str | None = None) -> str:
    cols_seen = _columns_of(matrix)
    rows = [f"{title}\n"] if title else []
    rows += ["| probe | what it checks | " + " | ".join(cols_seen) + " |"]
    rows += ["|---|---|" + "---|" * len(cols_seen)]
    probes = load()
    for probe, cols in matrix.items():
        cells = " | ".join(SYMBOLS[cols.get(c, {}).get("status")] for c in cols_seen)
        rows.append(f"| `{probe}` | {probes[probe].summary} | {cells} |")
    rows += ["", "Evidence, stock torch and the most complete column:", ""]
    last = cols_seen[-1]
    for probe, cols in matrix.items():
        rows.append(f"- `{probe}`")
        for column in dict.fromkeys(("stock", last)):
            if column in cols:
                rows.append(f"  - {column}: {cols[column]['evidence']}")
    return "\n".join(rows) + "\n"
