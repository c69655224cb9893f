"""Compiled acc vs compiled cuda on one GPU, side by side (acc over CUDA memory).

``python torch_acc/benchmarks/gpu.py [--json PATH]``: for each case, the same
function is compiled once for ``cuda`` and once for ``acc`` (acc:i is CUDA
device i under another name), checked equal, and timed with
``triton.testing.do_bench`` medians on fresh inputs after warm-up, in
alternating rounds. Then one buffer allocation through each wrapper's fast
allocator. Prints a table last; ratios are cuda time / acc time (>= 1: acc at
least as fast).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def pointwise(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x.sin() * y.cos() + x * 0.5).relu()


def reduction(x: torch.Tensor) -> torch.Tensor:
    return (x * x).sum(-1).sqrt() + x.amax(-1)


def layernorm_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(torch.nn.functional.layer_norm(x, x.shape[-1:]) * 2.0, -1)


def mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x @ w1) @ w2


#: name -> (function, shapes of its inputs): sizes that fill an H200.
CASES: dict[str, tuple[Callable[..., torch.Tensor], list[tuple[int, ...]]]] = {
    "pointwise 8192x4096": (pointwise, [(8192, 4096), (8192, 4096)]),
    "reduction 8192x4096": (reduction, [(8192, 4096)]),
    "layernorm+softmax 8192x4096": (layernorm_softmax, [(8192, 4096)]),
    "mlp 4096x1024x4096": (mlp, [(4096, 1024), (1024, 4096), (4096, 1024)]),
}

ROUNDS = 3


def _inputs(shapes: list[tuple[int, ...]], device: str, seed: int) -> list[torch.Tensor]:
    generator = torch.Generator("cuda").manual_seed(seed)
    made = [torch.randn(s, device="cuda", generator=generator) for s in shapes]
    return [t.to(device) for t in made]


def bench_case(fn: Callable[..., torch.Tensor], shapes: list[tuple[int, ...]]) -> dict[str, Any]:
    from triton.testing import do_bench

    compiled = {device: torch.compile(fn) for device in ("cuda", "acc")}
    warm = {d: _inputs(shapes, d, seed=0) for d in compiled}
    outs = {d: compiled[d](*warm[d]) for d in compiled}
    torch.testing.assert_close(outs["acc"].cpu(), outs["cuda"].cpu(), atol=1e-2, rtol=1e-2)
    fresh = {d: _inputs(shapes, d, seed=1) for d in compiled}
    times: dict[str, list[float]] = {d: [] for d in compiled}
    for _ in range(ROUNDS):
        for d in compiled:
            run = lambda d=d: compiled[d](*fresh[d])  # noqa: E731
            times[d].append(do_bench(run, warmup=50, rep=300, return_mode="median"))
    cuda_ms, acc_ms = (statistics.median(times[d]) for d in ("cuda", "acc"))
    eager_ms = do_bench(lambda: fn(*fresh["cuda"]), warmup=50, rep=300, return_mode="median")
    return {
        "cuda_ms": cuda_ms,
        "acc_ms": acc_ms,
        "ratio": cuda_ms / acc_ms,
        "eager_cuda_ms": eager_ms,
        "rounds": times,
    }


def bench_allocation() -> dict[str, float]:
    """Microseconds per buffer through each generated wrapper's allocator."""
    from torch._C._dynamo.guards import _empty_strided_cuda
    from torch.utils.benchmark import Timer

    import torch_acc

    fast_acc = torch_acc._C._empty_strided
    args = ((8192,), (1,), torch.float32)

    def median_us(stmt: Callable[[], Any]) -> float:
        timer = Timer("stmt()", globals={"stmt": stmt})
        return timer.blocked_autorange(min_run_time=1.0).median * 1e6

    results = {}
    for _ in range(ROUNDS):
        for name, stmt in (
            ("cuda_fast_us", lambda: _empty_strided_cuda(*args)),
            ("acc_fast_us", lambda: fast_acc(*args)),
            ("acc_generic_us", lambda: torch.empty_strided(*args[:2], device="acc")),
        ):
            results.setdefault(name, []).append(median_us(stmt))
    out = {k: statistics.median(v) for k, v in results.items()}
    out["ratio"] = out["acc_fast_us"] / out["cuda_fast_us"]
    return out


def _driver_version() -> str:
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.split("\n", 1)[0].strip() or "unknown"


def versions() -> dict[str, str]:
    import triton

    props = torch.cuda.get_device_properties(0)
    return {
        "gpu": f"{torch.cuda.device_count()} x {props.name}",
        "torch": f"{torch.__version__} (git {torch.version.git_version[:10]})",
        "triton": triton.__version__,
        "cuda": str(torch.version.cuda),
        "driver": _driver_version(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python torch_acc/benchmarks/gpu.py", description=__doc__)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    import torch_acc

    if torch_acc.mode != "cuda":
        print("error: acc is not over CUDA memory (TORCH_ACC_MODE=cuda)", file=sys.stderr)
        return 1
    results: dict[str, Any] = {"versions": versions(), "cases": {}}
    for name, (fn, shapes) in CASES.items():
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        torch._dynamo.reset()
        results["cases"][name] = bench_case(fn, shapes)
    print("[bench] allocation ...", file=sys.stderr, flush=True)
    results["allocation"] = bench_allocation()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    print(", ".join(f"{k} {v}" for k, v in results["versions"].items()))
    print("| case | cuda compiled ms | acc compiled ms | cuda/acc | goal >= 0.95 | eager cuda ms |")
    print("|---|---|---|---|---|---|")
    for name, r in results["cases"].items():
        met = "met" if r["ratio"] >= 0.95 else "MISSED"
        print(
            f"| {name} | {r['cuda_ms']:.3f} | {r['acc_ms']:.3f} | {r['ratio']:.3f} | {met} "
            f"| {r['eager_cuda_ms']:.3f} |"
        )
    a = results["allocation"]
    met = "met" if a["ratio"] <= 1.2 else "MISSED"
    print(
        f"allocation per buffer: acc fast {a['acc_fast_us']:.2f} us, cuda fast "
        f"{a['cuda_fast_us']:.2f} us, acc/cuda {a['ratio']:.3f} (goal <= 1.2: {met}); "
        f"acc generic empty_strided {a['acc_generic_us']:.2f} us"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
