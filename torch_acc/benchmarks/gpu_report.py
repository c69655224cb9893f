"""The GPU benchmark's tables (``gpu.py``): rendering saved results, each
workload row's spread and verdict, merging the results of several runs."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from gpu_workloads import HOST_PROFILE_CALLS, WORKLOAD_DEVICES, WORKLOADS


def render(results: dict[str, Any]) -> str:
    """The tables of whatever sections ``results`` holds."""
    lines = [", ".join(f"{k} {v}" for k, v in results["versions"].items())]
    if "cases" in results:
        lines += [
            "| case | cuda compiled ms | acc compiled ms | cuda/acc | goal >= 0.95 "
            "| eager cuda ms |",
            "|---|---|---|---|---|---|",
        ]
        for name, r in results["cases"].items():
            met = "met" if r["ratio"] >= 0.95 else "MISSED"
            lines.append(
                f"| {name} | {r['cuda_ms']:.3f} | {r['acc_ms']:.3f} | {r['ratio']:.3f} | {met} "
                f"| {r['eager_cuda_ms']:.3f} |"
            )
    if "allocation" in results:
        a = results["allocation"]
        met = "met" if a["ratio"] <= 1.2 else "MISSED"
        lines.append(
            f"allocation per buffer: acc fast {a['acc_fast_us']:.2f} us, cuda fast "
            f"{a['cuda_fast_us']:.2f} us, acc/cuda {a['ratio']:.3f} (goal <= 1.2: {met}); "
            f"acc generic empty_strided {a['acc_generic_us']:.2f} us"
        )
    calls = results.get("extern_calls")
    if calls is not None:
        lines += [
            "",
            "| call, small bf16 sizes, each device in its own process | cuda us | acc us "
            "| acc - cuda us |",
            "|---|---|---|---|",
        ]
        # Results saved before a call joined the list lack it.
        for name in (n for n in calls["cuda"] if n in calls["acc"]):
            cuda_us, acc_us = calls["cuda"][name], calls["acc"][name]
            lines.append(f"| {name} | {cuda_us:.2f} | {acc_us:.2f} | {acc_us - cuda_us:+.2f} |")
    lb = results.get("launch_bound")
    if lb is not None:
        met = "met" if lb["ratio"] >= 0.95 else "MISSED"
        graphed = ("cuda reduce-overhead", "acc reduce-overhead")
        skips = {k: lb[k]["cudagraph_skips"] for k in graphed}
        lines += [
            "",
            "| launch-bound, 32 small kernels | cuda graphs ms | acc graphs ms | cuda/acc "
            "| goal >= 0.95 | acc without graphs ms | graphs speedup on acc "
            "| cuda without graphs ms |",
            "|---|---|---|---|---|---|---|---|",
            f"| mode=reduce-overhead | {lb['cuda reduce-overhead']['ms']:.3f} "
            f"| {lb['acc reduce-overhead']['ms']:.3f} | {lb['ratio']:.3f} | {met} "
            f"| {lb['acc default']['ms']:.3f} | {lb['acc_graph_speedup']:.2f}x "
            f"| {lb['cuda default']['ms']:.3f} |",
            f"cudagraph skips (0: the graphs were recorded): {skips}",
        ]
    workloads = results.get("workloads", {})
    if workloads:
        lines += [
            "",
            "| workload, each device in its own processes (median) | cuda compiled ms "
            "| acc compiled ms | cuda/acc | spread (fastest and slowest pairs) "
            "| goal >= 0.95 | Triton template picked (cuda, acc) "
            "| first call s, FX graph cache hit/miss (cuda; acc) |",
            "|---|---|---|---|---|---|---|---|",
        ]
    for name, w in workloads.items():
        if "error" in w:
            lines.append(f"| {name} | | | | FAILED: {w['error']} | | | |")
            continue
        low, high = ratio_spread(w)
        templates = f"{w['cuda']['triton_template']}, {w['acc']['triton_template']}"
        lines.append(
            f"| {name} | {w['cuda']['ms']:.3f} | {w['acc']['ms']:.3f} | {w['ratio']:.3f} "
            f"| {low:.3f}-{high:.3f} | {verdict(w)} | {templates} | {_first_calls(w)} |"
        )
    repeated = {
        name: w
        for name, w in workloads.items()
        if len(w.get("cuda", {}).get("ms_by_process", [])) > 1
    }
    if repeated:
        # One slow process moves a median of two or three; the fastest
        # processes of each device show whether the gap outlasts that.
        lines.append(
            "\nms by process, in the order they ran (devices alternating), and cuda/acc of "
            "each device's fastest process:"
        )
        for name, w in repeated.items():
            by_device = "; ".join(
                f"{device} " + ", ".join(f"{ms:.3f}" for ms in w[device]["ms_by_process"])
                for device in WORKLOAD_DEVICES
            )
            fastest = min(w["cuda"]["ms_by_process"]) / min(w["acc"]["ms_by_process"])
            lines.append(f"- {name}: {by_device}; fastest against fastest {fastest:.3f}")
    if workloads:
        failed = [name for name, w in workloads.items() if "error" in w]
        lines.append(
            f"\nworkloads that run on acc and match cuda: {len(workloads) - len(failed)} of "
            f"{len(workloads)}" + (f"; failing: {', '.join(failed)}" if failed else "")
        )
    for name, w in workloads.items():
        if "ratio" in w and verdict(w) != "met":
            for device in WORKLOAD_DEVICES:
                if "profile" in w.get(device, {}):  # a --together run records none
                    lines += [f"\nprofile, {name}, {device} (5 calls):\n```", w[device]["profile"]]
                    lines.append("```")
                    if "host_profile" in w[device]:  # rows measured before it was kept
                        lines += [
                            f"\nhost time per step, {name}, {device} (Python's own time, "
                            f"top functions, {HOST_PROFILE_CALLS} steps):\n```",
                            w[device]["host_profile"],
                            "```",
                        ]
    for name, w in workloads.items():
        for device in WORKLOAD_DEVICES:
            if "first_call_profile" in w.get(device, {}):
                lines += [
                    f"\nfirst call, {name}, {device} ({w[device]['first_call_s']:.1f} s under "
                    "cProfile; top functions by cumulative time):\n```",
                    w[device]["first_call_profile"],
                    "```",
                ]
    for config in ("cuda reduce-overhead", "acc reduce-overhead"):
        if lb is not None:
            lines += [f"\nhost time per call, {config} (own time, top functions):\n```"]
            lines += [lb[config]["profile"], "```"]
    return "\n".join(lines)


def ratio_spread(row: dict[str, Any]) -> tuple[float, float]:
    """cuda/acc of the two devices' fastest processes and of their slowest,
    lower first: how far one process's luck moves the row's ratio."""
    cuda = row["cuda"].get("ms_by_process", [row["cuda"]["ms"]])
    acc = row["acc"].get("ms_by_process", [row["acc"]["ms"]])
    pairs = (min(cuda) / min(acc), max(cuda) / max(acc))
    return min(pairs), max(pairs)


def verdict(row: dict[str, Any], goal: float = 0.95) -> str:
    """``met`` if the median ratio and the whole spread reach ``goal``,
    ``MISSED`` if the median and the whole spread lie below it, else
    ``undecided`` (the processes disagree about the goal)."""
    low, high = ratio_spread(row)
    if row["ratio"] >= goal and low >= goal:
        return "met"
    if row["ratio"] < goal and high < goal:
        return "MISSED"
    return "undecided"


def _first_calls(row: dict[str, Any]) -> str:
    """Each device's first call and its FX graph cache counts (rows measured
    before they were kept have none)."""
    parts = []
    for device in WORKLOAD_DEVICES:
        run = row[device]
        if "first_call_s" in run:
            cache = run["fx_graph_cache"]
            parts.append(f"{run['first_call_s']:.1f}, {cache['hit']}/{cache['miss']}")
    return "; ".join(parts)


def merge(paths: list[Path]) -> dict[str, Any]:
    """Results saved by runs of different sections, as one: a later file's
    sections replace an earlier one's, and its workload rows the same rows."""
    merged: dict[str, Any] = {}
    rows: dict[str, Any] = {}
    for path in paths:
        results = json.loads(path.read_text(encoding="utf-8"))
        rows.update(results.pop("workloads", {}))
        merged.update(results)
    if rows:
        merged["workloads"] = {name: rows[name] for name in WORKLOADS if name in rows}
    return merged


def pool(paths: list[Path]) -> dict[str, Any]:
    """Runs that timed the same workload rows in more processes (one
    measurement split across calls of one machine), as one: each row's
    processes pooled per device, in the runs' order, and its medians and
    ratio taken again. A row that failed in any run stays failed.

    Raises:
        ValueError: if the runs name different machines or versions.
    """
    runs = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    versions = {json.dumps(run["versions"], sort_keys=True) for run in runs}
    if len(versions) > 1:
        raise ValueError(f"the runs were made on different machines or versions: {versions}")
    rows: dict[str, Any] = {}
    for run in runs:
        for name, row in run.get("workloads", {}).items():
            pooled = rows.setdefault(name, {})
            if "error" in pooled:
                continue
            if "error" in row:
                rows[name] = {"error": row["error"]}
                continue
            for device in WORKLOAD_DEVICES:
                first = pooled.setdefault(device, {**row[device], "ms_by_process": []})
                first["ms_by_process"] += row[device].get("ms_by_process", [row[device]["ms"]])
    for row in rows.values():
        if "error" not in row:
            for device in WORKLOAD_DEVICES:
                row[device]["ms"] = statistics.median(row[device]["ms_by_process"])
            row["ratio"] = row["cuda"]["ms"] / row["acc"]["ms"]
    return {
        "versions": runs[0]["versions"],
        "workloads": {name: rows[name] for name in WORKLOADS if name in rows},
    }
