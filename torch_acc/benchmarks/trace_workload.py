"""Chrome traces of one GPU benchmark workload on one device, and a summary of them.

``python torch_acc/benchmarks/trace_workload.py record DEVICE ROW OUT.json.gz``: compiles
the workload ``ROW`` of ``gpu.py`` (a name or a unique part of one) on ``DEVICE`` (``cuda``,
or ``acc`` over CUDA memory, with ``TORCH_ACC_MODE=cuda``) in this process alone, times
three rounds of 20 steps, counts the caching allocator's device allocations over them,
then records three steps with torch.profiler (CPU and CUDA) into ``OUT.json.gz``. Run it
once per device, each in a process of its own.

``python torch_acc/benchmarks/trace_workload.py summarize A.json.gz [B.json.gz ...] [--inside OP]``:
for each trace, the CUDA runtime and driver calls (count, total, longest), the operators
and annotations with the most time, and with ``--inside``, every event inside the median
call of ``OP`` on its thread: where two devices' host time for the same step parts.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch


STEPS = 20
ALLOCATOR_COUNTERS = ("num_device_alloc", "num_device_free", "num_alloc_retries")


def _row(text: str) -> str:
    import gpu

    matches = [name for name in gpu.WORKLOADS if text == name or text in name]
    if len(matches) != 1:
        raise SystemExit(f"error: {text!r} names {len(matches)} workload rows: {matches}")
    return matches[0]


def record(device: str, row: str, out: Path) -> None:
    """Times ``row`` on ``device`` and writes a gzipped Chrome trace of three steps."""
    import gpu
    from torch.profiler import ProfilerActivity, profile

    if device == "acc":
        from torch_acc.registration import register_inductor_backend

        register_inductor_backend()
    name = _row(row)
    kind, dtype, size = gpu.WORKLOADS[name]
    if dtype == torch.float32:
        torch.set_float32_matmul_precision("high")
    fn, inputs, options = gpu._workload(kind, dtype, size, device, small=False)
    compiled = fn if options is None else torch.compile(fn, **options)

    def step() -> Any:
        with torch.enable_grad():
            return compiled(*inputs)

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
    with tempfile.TemporaryDirectory() as scratch:
        plain = Path(scratch) / "trace.json"
        prof.export_chrome_trace(str(plain))
        with gzip.open(out, "wb") as packed:
            packed.write(plain.read_bytes())
    print(f"{device}: trace of 3 steps in {out}")


def _events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path) as packed:
        return [e for e in json.load(packed)["traceEvents"] if e.get("ph") == "X"]


def _outermost(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls no other call of the list encloses on its thread (a
    backend's kernel may call the same operator again on its peer)."""

    def encloses(outer: dict[str, Any], inner: dict[str, Any]) -> bool:
        return (
            outer is not inner
            and outer["tid"] == inner["tid"]
            and outer["ts"] <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]
        )

    return [call for call in calls if not any(encloses(other, call) for other in calls)]


def _within(events: list[dict[str, Any]], span: dict[str, Any]) -> list[dict[str, Any]]:
    """The events on ``span``'s thread that start and end inside it, in order."""
    end = span["ts"] + span["dur"]
    inside = (
        e
        for e in events
        if e["tid"] == span["tid"] and e["ts"] >= span["ts"] and e["ts"] + e["dur"] <= end
    )
    return sorted(inside, key=lambda e: e["ts"])


def summarize(path: Path, inside: str | None, top: int = 25) -> str:
    """The runtime calls, the busiest operators and, for ``inside``, the
    events within its median outermost call, as text."""
    events = _events(path)
    lines = [f"== {path.name}: {len(events)} events (3 steps)"]
    calls: dict[str, list[float]] = collections.defaultdict(list)
    ops: dict[str, list[float]] = collections.defaultdict(list)
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            calls[e["name"]].append(e["dur"])
        elif e.get("cat") in ("cpu_op", "user_annotation"):
            ops[e["name"]].append(e["dur"])
    lines.append("CUDA runtime and driver calls: count, total us, longest us")
    for name, took in sorted(calls.items(), key=lambda kv: -sum(kv[1]))[:top]:
        lines.append(f"  {name[:60]:60s} {len(took):6d} {sum(took):10.1f} {max(took):8.1f}")
    lines.append("operators and annotations: count, total us")
    for name, took in sorted(ops.items(), key=lambda kv: -sum(kv[1]))[:top]:
        lines.append(f"  {name[:70]:70s} {len(took):6d} {sum(took):10.1f}")
    if inside:
        outer = sorted(
            _outermost([e for e in events if e["name"] == inside]), key=lambda e: e["dur"]
        )
        if not outer:
            return "\n".join([*lines, f"no {inside} in this trace"])
        median = outer[len(outer) // 2]
        lines.append(f"inside the median of {len(outer)} outermost {inside}: us from its start, us")
        for e in _within(events, median):
            offset = e["ts"] - median["ts"]
            lines.append(f"  +{offset:7.1f} {e['dur']:8.1f}  {e.get('cat')}: {e['name'][:80]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    recording = verbs.add_parser("record", help="time a workload row and trace three steps")
    recording.add_argument("device", choices=("cuda", "acc"))
    recording.add_argument("row", help="a workload row of gpu.py, or a unique part of its name")
    recording.add_argument("out", type=Path, help="the trace to write (.json.gz)")
    summary = verbs.add_parser("summarize", help="what traces hold, side by side")
    summary.add_argument("traces", type=Path, nargs="+")
    summary.add_argument("--inside", help="an operator whose median call to open up")
    args = parser.parse_args(argv)
    if args.verb == "record":
        if not torch.cuda.is_available():
            raise SystemExit("error: record needs a CUDA GPU (acc runs over CUDA memory)")
        if args.device == "acc" and os.environ.get("TORCH_ACC_MODE") != "cuda":
            # Read when torch_acc is imported, which may be at torch's own import.
            raise SystemExit("error: record acc needs TORCH_ACC_MODE=cuda in the environment")
        record(args.device, args.row, args.out)
    else:
        for path in args.traces:
            print(summarize(path, args.inside))
    return 0


if __name__ == "__main__":
    sys.exit(main())
