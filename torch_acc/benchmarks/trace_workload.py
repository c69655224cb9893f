"""Chrome traces of one GPU benchmark workload on one device, and a summary of them.

``python torch_acc/benchmarks/trace_workload.py record DEVICE ROW OUT.json.gz``: compiles
the workload ``ROW`` of ``gpu.py`` (a name, a unique part of one, or the beginning of one
name among those it is part of) on ``DEVICE`` (``cuda``,
or ``acc`` over CUDA memory, with ``TORCH_ACC_MODE=cuda``) in this process alone, times
three rounds of 20 steps, counts the caching allocator's device allocations over them,
then records three steps with torch.profiler (CPU and CUDA) into ``OUT.json.gz``. Run it
once per device, each in a process of its own.

``python torch_acc/benchmarks/trace_workload.py summarize A.json.gz B.json.gz --inside OP``:
for each trace, its GPU kernels' time against the trace's span, the CUDA runtime and
driver calls (count, total, median, 90th percentile, longest) and the operators and
annotations with the most time; then, for each ``--inside`` operator, its outermost calls
paired by order across the traces (the same step makes them in the same order): the
medians of the whole call, of its time outside a nested call of the same operator (a
backend's layer around its peer's kernel) and of that nested call, and the events inside
one pair of calls. That is where two devices' host time for the
same step parts.

``python torch_acc/benchmarks/trace_workload.py kernels A.json.gz B.json.gz``: the traces'
GPU kernels by name, side by side (count and device time in each), the names whose time
differs most first: the work one device does and the other does not; then the kernels
both launch under one name with other configurations (threads per block, blocks,
registers per thread): the same kernel, autotuned to another choice.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch


STEPS = 20
ALLOCATOR_COUNTERS = ("num_device_alloc", "num_device_free", "num_alloc_retries")


def _row(text: str) -> str:
    import gpu_workloads

    if text in gpu_workloads.WORKLOADS:  # an exact name may also be part of another row's
        return text
    matches = gpu_workloads.selected_rows(text)
    # A row's name may hold another's ("masked attention training step ..."):
    # the rows the text begins decide between them.
    beginning = [row for row in matches if row.startswith(text)]
    if len(matches) > 1 and len(beginning) == 1:
        return beginning[0]
    if len(matches) != 1:
        raise SystemExit(f"error: {text!r} names {len(matches)} workload rows: {matches}")
    return matches[0]


def record(device: str, row: str, out: Path) -> None:
    """Times ``row`` on ``device`` and writes a gzipped Chrome trace of three steps."""
    import gpu_workloads
    from gpu import drop_autotuning_choices
    from torch.profiler import ProfilerActivity, profile

    name = _row(row)
    # This process autotunes the row's kernels at their first call, alone on
    # the GPU, rather than reading choices an earlier, busier process cached.
    drop_autotuning_choices()
    step = gpu_workloads.compiled_step(name, device)
    started = time.perf_counter()
    step()
    torch.cuda.synchronize()
    print(f"{device}: first call {time.perf_counter() - started:.1f} s", flush=True)
    for _ in range(STEPS):
        step()
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(STEPS):
            step()
        torch.cuda.synchronize()
        print(f"{device}: {name}: {(time.perf_counter() - started) / STEPS * 1e3:.3f} ms/step")
    after = torch.cuda.memory_stats()
    grown = {key: after.get(key, 0) - before.get(key, 0) for key in ALLOCATOR_COUNTERS}
    print(f"{device}: over {3 * STEPS} steps, the caching allocator's {grown}", flush=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            step()
        torch.cuda.synchronize()
    prof.export_chrome_trace(str(out))  # gzipped where the name ends in .gz
    print(f"{device}: trace of 3 steps in {out}")


def _events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path) as packed:
        return [e for e in json.load(packed)["traceEvents"] if e.get("ph") == "X"]


def _outermost(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls no other call of the list encloses on its thread (a
    backend's kernel may call the same operator again on its peer), in
    the order they started."""

    def encloses(outer: dict[str, Any], inner: dict[str, Any]) -> bool:
        return (
            outer is not inner
            and outer["tid"] == inner["tid"]
            and outer["ts"] <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]
        )

    outer = [call for call in calls if not any(encloses(other, call) for other in calls)]
    return sorted(outer, key=lambda e: e["ts"])


def _within(events: list[dict[str, Any]], span: dict[str, Any]) -> list[dict[str, Any]]:
    """The events on ``span``'s thread that start and end inside it, in order."""
    end = span["ts"] + span["dur"]
    inside = (
        e
        for e in events
        if e is not span
        and e["tid"] == span["tid"]
        and e["ts"] >= span["ts"]
        and e["ts"] + e["dur"] <= end
    )
    return sorted(inside, key=lambda e: e["ts"])


def _ninetieth(values: list[float]) -> float:
    return (
        statistics.quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]
    )


def _calls_table(events: list[dict[str, Any]], top: int) -> list[str]:
    calls: dict[str, list[float]] = collections.defaultdict(list)
    ops: dict[str, list[float]] = collections.defaultdict(list)
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            calls[e["name"]].append(e["dur"])
        elif e.get("cat") in ("cpu_op", "user_annotation"):
            ops[e["name"]].append(e["dur"])
    kernels = [e["dur"] for e in events if e.get("cat") == "kernel"]
    # The span is the profiler's window, its own overhead included; kernel time
    # well under it means the host set the pace.
    span = max((e["ts"] + e["dur"] for e in events), default=0.0) - min(
        (e["ts"] for e in events), default=0.0
    )
    lines = [
        f"GPU kernels: {len(kernels)}, {sum(kernels):.1f} us on the device,"
        f" in a trace of {span:.1f} us",
        "CUDA runtime and driver calls: count, total, median, 90th percentile, longest (us)",
    ]
    for name, took in sorted(calls.items(), key=lambda kv: -sum(kv[1]))[:top]:
        lines.append(
            f"  {name[:54]:54s} {len(took):5d} {sum(took):9.1f} {statistics.median(took):6.2f}"
            f" {_ninetieth(took):6.2f} {max(took):7.1f}"
        )
    lines.append("operators and annotations: count, total (us)")
    for name, took in sorted(ops.items(), key=lambda kv: -sum(kv[1]))[:top]:
        lines.append(f"  {name[:70]:70s} {len(took):6d} {sum(took):10.1f}")
    return lines


def _own_and_nested(call: dict[str, Any], events: list[dict[str, Any]]) -> tuple[float, float]:
    """A call's time outside a nested call of the same operator (a
    backend's layer around its peer's kernel), and that nested call's."""
    nested = [e for e in _within(events, call) if e["name"] == call["name"]]
    inner = nested[0]["dur"] if nested else 0.0
    return call["dur"] - inner, inner


def _paired_calls(traces: dict[str, list[dict[str, Any]]], op: str) -> list[str]:
    """``op``'s outermost calls in each trace, paired by their order (the
    same step makes them in the same order): medians of the whole call, of
    the time outside a nested call of the same operator and of that nested
    call, and the events inside the call the first trace's median picks."""
    calls = {name: _outermost([e for e in ev if e["name"] == op]) for name, ev in traces.items()}
    counts = {len(found) for found in calls.values()}
    if 0 in counts:
        return [f"{op}: no calls in " + ", ".join(n for n, f in calls.items() if not f)]
    if len(counts) != 1:
        return [f"{op}: {sorted(counts)} calls in the traces, not one number; not paired"]
    first = next(iter(calls.values()))
    pick = sorted(range(len(first)), key=lambda i: first[i]["dur"])[len(first) // 2]
    lines = [f"{op}, {len(first)} outermost calls per trace, paired by order (us):"]
    for name, found in calls.items():
        split = [_own_and_nested(call, traces[name]) for call in found]
        lines.append(
            f"  {name}: median call {statistics.median(c['dur'] for c in found):.1f}, outside a"
            f" nested {op} {statistics.median(s[0] for s in split):.1f},"
            f" the nested call {statistics.median(s[1] for s in split):.1f}"
        )
    for name, found in calls.items():
        call = found[pick]
        lines.append(f"  {name}: inside call {pick} ({call['dur']:.1f}): us from its start, us")
        for e in _within(traces[name], call):
            offset = e["ts"] - call["ts"]
            lines.append(f"    +{offset:7.1f} {e['dur']:8.1f}  {e.get('cat')}: {e['name'][:80]}")
    return lines


def summarize(paths: list[Path], inside: list[str], top: int = 25) -> str:
    """Each trace's kernel time, runtime calls and busiest operators, then, for each
    operator in ``inside``, its calls paired across the traces, as text."""
    traces = {path.name: _events(path) for path in paths}
    lines: list[str] = []
    for name, events in traces.items():
        lines += [f"== {name}: {len(events)} events", *_calls_table(events, top)]
    for op in inside:
        lines += ["", *_paired_calls(traces, op)]
    return "\n".join(lines)


def kernels(paths: list[Path], top: int = 40) -> str:
    """The GPU kernels of each trace by name, side by side: count and total
    device time (us) in each, the names where the traces differ most first,
    then each trace's totals. Where two devices run the same step, a name
    one of them lacks, or runs more often, is work the other does not do."""
    tables: dict[str, dict[str, list[float]]] = {}
    for path in paths:
        table: dict[str, list[float]] = collections.defaultdict(list)
        for e in _events(path):
            if e.get("cat") == "kernel":
                table[e["name"]].append(e["dur"])
        tables[path.name] = table
    names = set().union(*tables.values())

    def spread(name: str) -> float:
        totals = [sum(table.get(name, [])) for table in tables.values()]
        return max(totals) - min(totals)

    header = "  ".join(f"{trace[:24]:>24s}" for trace in tables)
    lines = [f"{'kernel (count, total us per trace)':80s}  {header}"]
    for name in sorted(names, key=spread, reverse=True)[:top]:
        cells = "  ".join(
            f"{len(table.get(name, [])):6d} {sum(table.get(name, [])):17.1f}"
            for table in tables.values()
        )
        lines.append(f"{name[:80]:80s}  {cells}")
    totals = "  ".join(
        f"{sum(map(len, table.values())):6d} {sum(map(sum, table.values())):17.1f}"
        for table in tables.values()
    )
    lines.append(f"{'all kernels':80s}  {totals}")
    return "\n".join(lines + _launch_differences(paths, top))


def _launch(event: dict[str, Any]) -> str:
    """A kernel launch's configuration: threads per block, blocks, registers
    per thread."""
    args = event.get("args", {})
    threads = 1
    for extent in args.get("block", []):
        threads *= extent
    blocks = 1
    for extent in args.get("grid", []):
        blocks *= extent
    return f"{threads}t x {blocks}b, {args.get('registers per thread', '?')}r"


def _launch_differences(paths: list[Path], top: int) -> list[str]:
    """The kernels the traces launch under the same name with other
    configurations (each trace's most frequent one): the same generated
    kernel with another block size or number of warps, chosen when it was
    compiled (Inductor benchmarks a pointwise kernel's candidate
    configurations the first time it runs and caches the fastest)."""
    launches: dict[str, dict[str, collections.Counter[str]]] = {}
    for path in paths:
        for e in _events(path):
            if e.get("cat") == "kernel":
                per_trace = launches.setdefault(e["name"], {})
                per_trace.setdefault(path.name, collections.Counter())[_launch(e)] += 1
    differing = [
        (name, per_trace)
        for name, per_trace in launches.items()
        if len(per_trace) == len(paths)
        and len({c.most_common(1)[0][0] for c in per_trace.values()}) > 1
    ]
    if not differing:
        return ["same launch configuration for every kernel the traces share"]
    lines = [
        f"{len(differing)} kernels launched with other configurations "
        "(threads per block x blocks, registers per thread; each trace's most frequent):"
    ]
    for name, per_trace in sorted(differing)[:top]:
        cells = "  ".join(f"{c.most_common(1)[0][0]:>24s}" for c in per_trace.values())
        lines.append(f"{name[:80]:80s}  {cells}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    recording = verbs.add_parser("record", help="time a workload row and trace three steps")
    recording.add_argument("device", choices=("cuda", "acc"))
    recording.add_argument("row", help="a workload row of gpu.py, or a unique part of its name")
    recording.add_argument("out", type=Path, help="the trace to write (.json.gz)")
    summary = verbs.add_parser("summarize", help="what traces hold, and an operator's calls paired")
    summary.add_argument("traces", type=Path, nargs="+")
    summary.add_argument(
        "--inside", action="append", default=[], help="an operator whose calls to pair (repeatable)"
    )
    side_by_side = verbs.add_parser("kernels", help="the traces' GPU kernels by name, side by side")
    side_by_side.add_argument("traces", type=Path, nargs="+")
    side_by_side.add_argument("--top", type=int, default=40, help="how many kernel names")
    args = parser.parse_args(argv)
    if args.verb == "record":
        if not torch.cuda.is_available():
            raise SystemExit("error: record needs a CUDA GPU (acc runs over CUDA memory)")
        if args.device == "acc" and os.environ.get("TORCH_ACC_MODE") != "cuda":
            # Read when torch_acc is imported, which may be at torch's own import.
            raise SystemExit("error: record acc needs TORCH_ACC_MODE=cuda in the environment")
        if args.out.suffix != ".gz":
            raise SystemExit(f"error: {args.out} must end in .json.gz (summarize reads gzip)")
        record(args.device, args.row, args.out)
    elif args.verb == "kernels":
        print(kernels(args.traces, args.top))
    else:
        print(summarize(args.traces, args.inside))
    return 0


if __name__ == "__main__":
    sys.exit(main())
