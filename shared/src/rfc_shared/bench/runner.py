"""Run cases as interleaved A/B pairs in fresh interpreters and report."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..overlay.cachedirs import ENV_INDUCTOR
from .cases import SMOKE, SMOKE_CACHES, Case, Side


class BenchError(RuntimeError):
    """A side of a case failed to run."""


@dataclass
class SideResult:
    label: str
    samples: list[float]

    @property
    def stats(self) -> dict[str, float]:
        return {
            "min": min(self.samples),
            "median": statistics.median(self.samples),
            "max": max(self.samples),
        }


def measure(side: Side, env: dict[str, str] | None = None) -> float:
    """Seconds (or the case's unit) ``side`` prints, run in a fresh
    interpreter; ``env`` goes over the side's own variables."""
    full_env = {**os.environ, **side.env, **(env or {})}
    done = subprocess.run(
        [sys.executable, "-c", side.code], capture_output=True, text=True, env=full_env
    )
    if done.returncode:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BenchError(f"{side.label}: {tail}")
    return float(done.stdout.strip().splitlines()[-1])


def run_case(
    case: Case,
    rounds: int,
    progress: Callable[[str], None] = lambda line: None,
    smoke: bool = False,
) -> dict[str, Any]:
    """Measures ``case``: a warm-up pair, then ``rounds`` interleaved A/B pairs.

    With ``smoke``, one pair on the least work that runs each side's code
    (:data:`~rfc_shared.bench.cases.SMOKE`), no warm-up, compiled kernels
    shared between the sides (:data:`~rfc_shared.bench.cases.SMOKE_CACHES`, in
    the Inductor cache directory the environment names, else a temporary
    one): its figures mean nothing, it shows that the case still runs.
    """
    with contextlib.ExitStack() as stack:
        env = None
        if smoke:
            cache = os.environ.get(ENV_INDUCTOR) or stack.enter_context(
                tempfile.TemporaryDirectory(prefix="rfc-bench-smoke-")
            )
            env = {SMOKE: "1", **SMOKE_CACHES, ENV_INDUCTOR: cache}
        a, b = SideResult(case.a.label, []), SideResult(case.b.label, [])
        if not smoke:
            measure(case.a), measure(case.b)  # warm caches (bytecode, Inductor) on both sides
        for number in range(1, rounds + 1):
            progress(f"{case.name}: round {number}/{rounds}")
            a.samples.append(measure(case.a, env))
            b.samples.append(measure(case.b, env))
    ratio = a.stats["median"] / b.stats["median"]
    if case.ratio == "speed":
        ratio = 1 / ratio
    return {
        "case": case.name,
        "description": case.description,
        "unit": case.unit,
        "goal": case.goal,
        "ratio_kind": case.ratio,
        "ratio": ratio,
        "met": _met(ratio, a.stats["median"], case.goal),
        "a": {"label": a.label, **a.stats, "samples": a.samples},
        "b": {"label": b.label, **b.stats, "samples": b.samples},
    }


def _met(ratio: float, a_median: float, goal: str) -> bool | None:
    value = ratio
    if goal.startswith("A "):
        value, goal = a_median, goal[2:]
    op, _, bound = goal.partition(" ")
    try:
        limit = float(bound)
    except ValueError:
        return None
    return {"<=": value <= limit, ">=": value >= limit, "<": value < limit}.get(op)


def merge(previous: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """``previous`` with the cases ``report`` ran replaced (in place in the
    order) or appended; the machine is ``report``'s."""
    fresh = {r["case"]: r for r in report["results"]}
    results = [fresh.pop(r["case"], r) for r in previous["results"]]
    return {"machine": report["machine"], "results": results + list(fresh.values())}


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "torch": importlib.metadata.version("torch"),
        "cpus": os.cpu_count(),
        "threads": "corpus cases set torch.set_num_threads(1); the others run one thread",
    }


def run(
    cases: Sequence[Case],
    rounds: int,
    progress: Callable[[str], None] = lambda line: None,
    smoke: bool = False,
) -> dict[str, Any]:
    results = [run_case(c, rounds, progress, smoke) for c in cases]
    return {"machine": machine(), "results": results}


def markdown(report: dict[str, Any]) -> str:
    rows = [
        "| case | A | B | A median | B median | ratio | goal | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        met = {True: "yes", False: "no", None: "report"}[r["met"]]
        kind = "B/A" if r.get("ratio_kind") == "speed" else "A/B"
        rows.append(
            f"| {r['case']} | {r['a']['label']} | {r['b']['label']} | "
            f"{_fmt(r['a']['median'], r['unit'])} | {_fmt(r['b']['median'], r['unit'])} | "
            f"{r['ratio']:.3f} ({kind}) | {r['goal']} | {met} |"
        )
    rows += ["", "min / median / max of each side:", ""]
    for r in report["results"]:
        for side in ("a", "b"):
            s = r[side]
            rows.append(
                f"- {r['case']} {s['label']}: {_fmt(s['min'], r['unit'])} / "
                f"{_fmt(s['median'], r['unit'])} / {_fmt(s['max'], r['unit'])} "
                f"({len(s['samples'])} runs)"
            )
    return "\n".join(rows) + "\n"


def _fmt(value: float, unit: str) -> str:
    if unit == "s":
        for scale, name in ((1, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
            if value >= scale:
                return f"{value / scale:.3g} {name}"
        return f"{value / 1e-9:.3g} ns"
    return f"{value:.4g} {unit}"


def as_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1, default=lambda o: asdict(o))
