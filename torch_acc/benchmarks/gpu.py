"""Compiled acc vs compiled cuda on one GPU, side by side (acc over CUDA memory).

``python torch_acc/benchmarks/gpu.py [--json PATH]``: for each case, the same
function is compiled once for ``cuda`` and once for ``acc`` (acc:i is CUDA
device i under another name), checked equal, and timed with
``triton.testing.do_bench`` medians on fresh inputs after warm-up, in
alternating rounds. Then one buffer allocation through each wrapper's fast
allocator, and the host's time per call of the ATen calls compiled graphs
make outside Triton (each device in a process of its own). Then a
launch-bound case (many small kernels) under
``mode="reduce-overhead"``: cuda and acc recorded as CUDA graphs, and both
without graphs, each configuration in a process of its own. Then real
workloads, each device in a process of its own: the corpus's transformer block
(forward, bf16), its AdamW training step (fp32 with TF32 and bf16), a GEMM under
``mode="max-autotune-no-cudagraphs"``, a ResNet-18-shaped convnet's training
step (NCHW and channels_last), attention with a padding mask, autocast,
flex attention, a Hugging Face Llama training step, at device-bound and
host-bound sizes, a Llama-style greedy decode under graph capture, a vision
transformer's and a diffusion UNet block's training steps, a prefill compiled
with ``dynamic=True`` over prompts of many lengths and a mixture-of-experts
training step; each timed on the wall clock (rounds of back-to-back steps
between synchronizes), in alternating processes. Prints tables last; ratios
are cuda time / acc time (>= 1: acc at least as fast).

``--dry-run`` runs each workload once on the CPU at small sizes, untimed: a
check that the script works, for machines without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from gpu_report import merge, pool, render
from gpu_workloads import (
    HOST_PROFILE_CALLS,
    WORKLOAD_DEVICES,
    compiled_step,
    selected_rows,
)


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

#: Joins the names of the rows one workload child times (no row's name has it).
ROW_SEPARATOR = "|"


def launch_bound(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """16 rounds of a small matmul and a row normalization: about 32 kernels
    of a few microseconds each, so launching them is most of the time."""
    for _ in range(16):
        x = (x @ w).relu()
        x = x / (x.sum(-1, keepdim=True) + 1)
    return x


LAUNCH_BOUND_SHAPES = [(64, 64), (64, 64)]
#: (device, torch.compile mode): graphs on both devices, and neither.
LAUNCH_BOUND_CONFIGS = [
    ("cuda", "reduce-overhead"),
    ("acc", "reduce-overhead"),
    ("cuda", "default"),
    ("acc", "default"),
]


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


def _per_call_us(statements: dict[str, Callable[[], Any]], min_run_time: float) -> dict[str, float]:
    """Microseconds per call of each statement: the median of ``ROUNDS``
    alternating rounds of ``torch.utils.benchmark`` (which synchronizes the
    accelerator around each block of calls)."""
    from torch.utils.benchmark import Timer

    results: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        for name, stmt in statements.items():
            timer = Timer("stmt()", globals={"stmt": stmt})
            results.setdefault(name, []).append(
                timer.blocked_autorange(min_run_time=min_run_time).median
            )
    return {name: statistics.median(times) * 1e6 for name, times in results.items()}


def bench_allocation() -> dict[str, float]:
    """Microseconds per buffer through each generated wrapper's allocator."""
    from torch._C._dynamo.guards import _empty_strided_cuda

    import torch_acc

    fast_acc = torch_acc._C._empty_strided
    args = ((8192,), (1,), torch.float32)
    out = _per_call_us(
        {
            "cuda_fast_us": lambda: _empty_strided_cuda(*args),
            "acc_fast_us": lambda: fast_acc(*args),
            "acc_generic_us": lambda: torch.empty_strided(*args[:2], device="acc"),
        },
        min_run_time=1.0,
    )
    out["ratio"] = out["acc_fast_us"] / out["cuda_fast_us"]
    return out


# The ATen calls a compiled graph makes outside Triton (the products, with and
# without out=, and the fused attention op a graph with a Hugging Face padding
# mask calls), an allocation, and two calls that launch nothing: a view (the
# dispatcher's own cost) and a product with an empty result (all of a product's
# host work but cuBLAS's). Eager attention adds the choice of kernel. The
# channels-last convnet's convolutions are called as its graphs call them (the
# backward without a bias gradient), and argmax stands for any operator acc
# runs through its boxed fallback.
EXTERN_CALLS = (
    "view",
    "empty_strided",
    "mm out=, empty result",
    "mm",
    "mm out=",
    "addmm",
    "bmm out=",
    "add",
    "attention op, padding mask",
    "attention backward op, padding mask",
    "eager sdpa, padding mask",
    "convolution, channels_last",
    "convolution backward, channels_last",
    "argmax (boxed fallback on acc)",
)


def _attention_op_calls(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor
) -> dict[str, Callable[[], Any]]:
    """The fused attention ops SDPA picks for these inputs on their device,
    forward and backward (the ops a compiled training graph calls), each as a
    call with the arguments it had."""
    from torch.utils._python_dispatch import TorchDispatchMode

    calls: dict[str, tuple[Any, tuple, dict]] = {}

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[override]
            if "scaled_dot_product" in func.__name__:
                key = "backward" if "backward" in func.__name__ else "forward"
                calls.setdefault(key, (func, args, kwargs or {}))
            return func(*args, **(kwargs or {}))

    with Record():  # the autograd engine carries the mode to the backward
        torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward()

    def as_call(op: Any, args: tuple, kwargs: dict) -> Callable[[], Any]:
        def call() -> Any:
            with torch.no_grad():  # as in a compiled graph, which autograd wraps whole
                return op(*args, **kwargs)

        return call

    return {key: as_call(*recorded) for key, recorded in calls.items()}


def extern_calls_child(device: str) -> dict[str, float]:
    """Microseconds of wall clock per call of each of ``EXTERN_CALLS`` at a
    small size, where the host's time decides, in this process alone."""
    if device == "acc":
        from torch._dynamo.device_interface import get_interface_for_device

        import torch_acc  # noqa: F401

        # acc's convolutions keep channels-last once its interface has said it
        # has them, as Inductor asks before it compiles a convnet; unsettled,
        # they would convert every channels-last argument and result.
        get_interface_for_device("acc").backend_features()

    a, b, c, bias = (torch.randn(64, 64, dtype=torch.bfloat16).to(device) for _ in range(4))
    empty_a, empty_out = (torch.empty(0, 64, dtype=torch.bfloat16, device=device) for _ in range(2))
    a3, b3, c3 = (torch.randn(4, 64, 64, dtype=torch.bfloat16).to(device) for _ in range(3))
    # The host-bound Hugging Face row's attention: (B, H, S, D) with a (B, 1, S, S) mask; the
    # inputs need a gradient, as in training, so the op computes what the backward reads.
    q, k, v = (
        torch.randn(4, 4, 128, 64, dtype=torch.bfloat16).to(device).requires_grad_()
        for _ in range(3)
    )
    mask = torch.ones(4, 1, 128, 128, dtype=torch.bool).tril().to(device)
    attention = _attention_op_calls(q, k, v, mask)
    # A 3x3 convolution of the convnet's third stage (its host-bound size).
    image, weight = (
        torch.randn(*shape, dtype=torch.bfloat16)
        .to(device)
        .contiguous(memory_format=torch.channels_last)
        for shape in ((8, 128, 4, 4), (128, 128, 3, 3))
    )
    conv_args = ((1, 1), (1, 1), (1, 1), False, (0, 0), 1)

    def convolution() -> torch.Tensor:
        return torch.ops.aten.convolution.default(image, weight, None, *conv_args)

    grad = convolution()
    statements: dict[str, Callable[[], Any]] = {
        "view": lambda: a.view(4096),
        "empty_strided": lambda: torch.empty_strided((4096,), (1,), device=device),
        "mm out=, empty result": lambda: torch.mm(empty_a, b, out=empty_out),
        "mm": lambda: torch.mm(a, b),
        "mm out=": lambda: torch.mm(a, b, out=c),
        "addmm": lambda: torch.addmm(bias, a, b),
        "bmm out=": lambda: torch.bmm(a3, b3, out=c3),
        "add": lambda: torch.add(a, b),
        "attention op, padding mask": attention["forward"],
        "attention backward op, padding mask": attention["backward"],
        "eager sdpa, padding mask": lambda: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask
        ),
        "convolution, channels_last": convolution,
        "convolution backward, channels_last": lambda: torch.ops.aten.convolution_backward.default(
            grad, image, weight, [0], *conv_args, [True, True, False]
        ),
        "argmax (boxed fallback on acc)": lambda: torch.argmax(a),
    }
    return _per_call_us(statements, min_run_time=0.5)


def bench_extern_calls() -> dict[str, Any]:
    """Each device's calls in its own process; acc/cuda per call."""
    runs = {}
    for device in WORKLOAD_DEVICES:
        runs[device] = _child_result(f"extern calls {device}", "--extern-calls-child", device)
    return runs


def _child_result(what: str, *args: str, timeout: int = 900) -> Any:
    """The JSON a child of this script prints last, run with ``args`` in a
    process of its own with acc over CUDA memory."""
    print(f"[bench] {what} ...", file=sys.stderr, flush=True)
    done = subprocess.run(
        [sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TORCH_ACC_MODE": "cuda"},
    )
    if done.returncode:
        raise RuntimeError(f"{what} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def launch_bound_child(device: str, mode: str) -> dict[str, Any]:
    """One configuration of the launch-bound case, in this process alone (a
    fresh graph pool and tree manager; one accelerator's state)."""
    from torch._dynamo.utils import counters
    from triton.testing import do_bench

    if device == "acc":
        from torch_acc.registration import register_inductor_backend

        register_inductor_backend()  # whichever slices discover it
    compiled = torch.compile(launch_bound, mode=None if mode == "default" else mode)
    x, w = _inputs(LAUNCH_BOUND_SHAPES, device, seed=0)

    def step() -> torch.Tensor:
        torch.compiler.cudagraph_mark_step_begin()
        return compiled(x, w)

    for _ in range(3):  # warm up, record, replay: new values each time, so a replay
        x.normal_()  # that ran nothing would leave the previous step's output
        out = step()
        torch.testing.assert_close(out.cpu(), launch_bound(x, w).cpu(), atol=1e-3, rtol=1e-3)
    times = [do_bench(step, warmup=50, rep=300, return_mode="median") for _ in range(ROUNDS)]
    return {
        "ms": statistics.median(times),
        "rounds": times,
        "cudagraph_skips": counters["inductor"]["cudagraph_skips"],
        "profile": _host_profile(step),
    }


def _host_profile(step: Callable[[], Any], calls: int = 500, top: int = 15) -> str:
    """Where the host's time per call goes (a launch-bound case is host-bound):
    the ``top`` functions with the most own time over ``calls`` calls, in
    microseconds per call."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        step()
    profiler.disable()
    torch.cuda.synchronize()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    return "\n".join(
        f"{own / calls * 1e6:8.2f} us {count / calls:5.1f}x  {name} ({Path(file).name}:{line})"
        for (file, line, name), (_, count, own, _, _) in rows
    )


def _first_call_profile(call: Callable[[], Any], top: int = 45) -> tuple[Any, str]:
    """``call()``'s result, and the ``top`` functions with the most cumulative
    time under it, in seconds: where a process's first call goes (compiling,
    loading cached graphs, autotuning, making launchers)."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    result = profiler.runcall(call)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = sorted(stats.items(), key=lambda item: item[1][3], reverse=True)[:top]
    return result, "\n".join(
        f"{cumulative:8.3f} s {count:7d}x  {name} ({Path(file).name}:{line})"
        for (file, line, name), (_, count, _, cumulative, _) in rows
    )


def bench_launch_bound() -> dict[str, Any]:
    """Each configuration of the launch-bound case in its own process."""
    results: dict[str, Any] = {}
    for device, mode in LAUNCH_BOUND_CONFIGS:
        results[f"{device} {mode}"] = _child_result(
            f"launch-bound {device} {mode}", "--launch-bound-child", device, mode
        )
    graphs, eager = results["acc reduce-overhead"], results["acc default"]
    results["ratio"] = results["cuda reduce-overhead"]["ms"] / graphs["ms"]
    results["acc_graph_speedup"] = eager["ms"] / graphs["ms"]
    return results


def workload_child(
    name: str,
    device: str,
    dry_run: bool = False,
    compile_only: bool = False,
    first_call_profile: bool = False,
    profile: bool = True,
) -> dict[str, Any]:
    """One workload on one device, in this process alone: times the compiled
    workload, and reports its output's norm (checked against the other
    device's) and whether max-autotune picked a Triton template.
    ``profile``: also torch.profiler's and cProfile's tables of a few steps
    (the first process of each device has them; the others skip them).
    ``compile_only``: stop after the first call (it fills the compile caches).
    ``first_call_profile``: also where the first call's time goes (cProfile,
    which slows the first call down)."""
    from torch._dynamo.utils import counters
    from torch._inductor.utils import run_and_get_code

    step = compiled_step(name, device, small=dry_run)

    started = time.perf_counter()
    if first_call_profile:
        (out, codes), first_profile = _first_call_profile(lambda: run_and_get_code(step))
    else:
        out, codes = run_and_get_code(step)
    first_s = time.perf_counter() - started
    first = out[0] if isinstance(out, tuple) else out  # a training step's loss
    result: dict[str, Any] = {
        "norm": first.float().norm().item(),
        "triton_template": any("triton_tem_" in code for code in codes),
        # The first call compiles, or finds its graphs in the caches an
        # earlier process (--warm) filled: what a child's time goes to.
        "first_call_s": first_s,
        "fx_graph_cache": {
            k: counters["inductor"][f"fxgraph_cache_{k}"] for k in ("hit", "miss", "bypass")
        },
    }
    if first_call_profile:
        result["first_call_profile"] = first_profile
    if dry_run or compile_only:
        return result
    times = _wall_clock_ms(step)
    result.update(ms=statistics.median(times), rounds=times)
    if profile:
        result.update(
            profile=_profile(step), host_profile=_host_profile(step, calls=HOST_PROFILE_CALLS)
        )
    return result


def workloads_child(names: list[str], device: str, **options: Any) -> dict[str, Any]:
    """``workload_child`` for each of ``names`` in turn, in this one process:
    each row's result, or its error (a failing row does not stop the others).
    Each row's compiled graphs and memory are let go before the next."""
    import gc
    import traceback

    results: dict[str, Any] = {}
    for name in names:
        try:
            results[name] = workload_child(name, device, **options)
        except Exception as error:  # reported in the row, as a failed process's would be
            traceback.print_exc()
            results[name] = {"error": f"{type(error).__name__}: {error}"[:200]}
        torch._dynamo.reset()
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return results


def _wall_clock_ms(step: Callable[[], Any], round_s: float = 0.3) -> list[float]:
    """Milliseconds per step as a user's loop sees them: ``ROUNDS`` rounds of
    back-to-back steps, each round timed on the wall clock from a
    synchronized device to a synchronize after its last step, long enough
    (about ``round_s``) that the synchronize's own latency does not count."""
    for _ in range(3):  # warm up: allocator, autotuning caches, graph replays
        step()
    torch.cuda.synchronize()
    started = time.perf_counter()
    step()
    torch.cuda.synchronize()
    steps = max(3, int(round_s / max(time.perf_counter() - started, 1e-6)))
    times = []
    for _ in range(ROUNDS):
        torch.cuda.synchronize()
        started = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - started) / steps * 1e3)
    return times


def _profile(step: Callable[[], Any], calls: int = 5) -> str:
    """torch.profiler's tables of ``calls`` calls, by self device time and by
    self CPU time: printed side by side for a row that misses its goal."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            step()
        torch.cuda.synchronize()
    averages = prof.key_averages()
    return (
        "by self device time:\n"
        + averages.table(sort_by="self_device_time_total", row_limit=12)
        + "\nby self CPU time (where a host-bound step's time goes):\n"
        + averages.table(sort_by="self_cpu_time_total", row_limit=12)
    )


def _core_halves() -> tuple[set[int], set[int]]:
    """The cores this process may use, split in two disjoint halves: compile
    processes run on the first, timed ones on the second, so a timed process
    never shares a core with another of the benchmark's processes."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return set(cores), set(cores)
    half = len(cores) // 2
    return set(cores[:half]), set(cores[half:])


def _run_workload_child(
    names: list[str], device: str, *flags: str, cores: set[int] | None = None
) -> subprocess.CompletedProcess:
    """Runs ``--workload-child`` for rows ``names`` on one device in a process
    of its own (acc over CUDA memory; over host memory for a dry run on the
    CPU), pinned to ``cores`` when given."""
    return subprocess.run(
        [sys.executable, __file__, "--workload-child", ROW_SEPARATOR.join(names), device, *flags],
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "TORCH_ACC_MODE": "host" if "--dry-run" in flags else "cuda"},
        preexec_fn=None if cores is None else (lambda: os.sched_setaffinity(0, cores)),
    )


def warm_compile_caches(only: str, jobs: int) -> None:
    """Compiles the selected rows on each device, ``jobs`` processes at a
    time, so the timed runs that follow (one process at a time) find
    Inductor's and Triton's on-disk caches full: compiling, not timing, is
    most of a row's cost, and it is the host's, not the GPU's. Failures
    are left to the timed run to report.

    The first call of a compiled kernel also autotunes it (Inductor times a
    pointwise kernel's two candidate configurations and caches the faster
    beside the kernel). Timed beside other compiles, or beside whatever else
    the GPU runs, that choice is noise, and a cached choice is final for
    every later process: the traces of one run showed the same kernels
    launched with the other configuration on each device. So the choices
    these compiles made are dropped, and the first timed process, alone on
    the GPU, makes them, as a user's first run does."""
    from concurrent.futures import ThreadPoolExecutor

    def compile_one(row: tuple[str, str]) -> None:
        name, device = row
        _run_workload_child([name], device, "--compile-only", cores=_core_halves()[0])
        print(f"[bench] compiled {name} on {device}", file=sys.stderr, flush=True)

    rows = [(name, device) for name in selected_rows(only) for device in WORKLOAD_DEVICES]
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(compile_one, rows))
    dropped = drop_autotuning_choices()
    print(f"[bench] dropped {dropped} autotuning choices made while compiling", file=sys.stderr)


def drop_autotuning_choices() -> int:
    """Removes the kernels' cached autotuning choices (``*.best_config``) from
    the Inductor cache directory the timed processes use (this process's: the
    same overlay and environment); returns how many."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    choices = list(Path(cache_dir()).rglob("*.best_config"))
    for choice in choices:
        choice.unlink()
    return len(choices)


def bench_workloads(
    dry_run: bool = False,
    save: Callable[[dict[str, Any]], None] = lambda rows: None,
    only: str = "",
    repeat: int = 1,
    first_call_profile: bool = False,
    together: bool = False,
) -> dict[str, Any]:
    """Each workload on each device in processes of its own (one
    accelerator's compile caches, allocator and autotuning state per
    measurement); ``save`` gets the rows after each process; ``only``: the
    rows whose name has one of its ``|``-separated texts. ``repeat``:
    processes per device, the devices alternating (cuda, acc, cuda, acc,
    ...): a device's time is the median of its processes' (``ms_by_process``
    keeps each), since a host-bound step's time moves between processes more
    than within one. ``together``: each process times every selected row in
    turn, so a process's start and its reads of the compile caches are paid
    once per process rather than once per row; otherwise each row has
    processes of its own."""
    flags = ["--dry-run"] if dry_run else []
    if first_call_profile:
        flags.append("--first-call-profile")
    devices = ("cpu",) if dry_run else WORKLOAD_DEVICES
    rows = selected_rows(only)
    results: dict[str, Any] = {}
    for group in [rows] if together else [[name] for name in rows]:
        processes = {name: {device: [] for device in devices} for name in group}
        errors: dict[str, str] = {}
        for process in range(1 if dry_run else repeat):
            for device in devices:
                names = [name for name in group if name not in errors]
                if not names:
                    break
                print(
                    f"[bench {time.strftime('%H:%M:%S')}] {' | '.join(names)} {device} ...",
                    file=sys.stderr,
                    flush=True,
                )
                # The first process of each device profiles; the others only time.
                profiling = [] if process == 0 and not together else ["--no-profile"]
                done = _run_workload_child(
                    names, device, *flags, *profiling, cores=_core_halves()[1]
                )
                if done.returncode:
                    print(done.stderr, file=sys.stderr)
                    last = done.stderr.strip().splitlines()[-1:] or ["no output"]
                    measured = {name: {"error": last[0][:200]} for name in names}
                else:
                    measured = json.loads(done.stdout.strip().splitlines()[-1])
                for name, result in measured.items():
                    if "error" in result:
                        # A failed row is reported in the table; the other rows still run.
                        errors[name] = f"{device}: {result['error']}"
                        continue
                    processes[name][device].append(result)
                    if not dry_run:  # each process's time as it comes
                        print(
                            f"[bench] {name} {device}: {result['ms']:.3f} ms",
                            file=sys.stderr,
                            flush=True,
                        )
                # After each process, so a run stopped part-way keeps what it measured.
                for name in group:
                    if row := _row(processes[name], errors.get(name), dry_run):
                        results[name] = row
                save(results)
    return results


def _row(
    processes: dict[str, list[dict[str, Any]]], error: str | None, dry_run: bool
) -> dict[str, Any]:
    """One row's result from its processes' on each device: the first
    process's details, the median time over the processes and the ratio of
    the devices' medians (or the error that stopped the row)."""
    if error is not None:
        return {"error": error}
    runs: dict[str, Any] = {}
    for device, measured in processes.items():
        if not measured:
            return {}  # not measured yet on every device
        runs[device] = dict(measured[0])
        if not dry_run:
            by_process = [run["ms"] for run in measured]
            runs[device].update(ms=statistics.median(by_process), ms_by_process=by_process)
    if not dry_run:
        cuda, acc = runs["cuda"], runs["acc"]
        if abs(acc["norm"] - cuda["norm"]) > 2e-2 * abs(cuda["norm"]):
            return {"error": f"acc's output norm {acc['norm']} != cuda's {cuda['norm']}"}
        runs["ratio"] = cuda["ms"] / acc["ms"]
    return runs


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


SECTIONS = ("kernels", "allocation", "extern-calls", "launch-bound", "workloads")


def measure(
    sections: tuple[str, ...],
    save: Callable[[dict[str, Any]], None],
    only: str = "",
    warm_jobs: int = 0,
    repeat: int = 1,
    first_call_profile: bool = False,
    together: bool = False,
) -> dict[str, Any]:
    """The sections' measurements; ``save`` gets the results after each one,
    so a run stopped part-way keeps what it measured. ``warm_jobs``: compile
    the workload rows that many at a time first; ``repeat``,
    ``first_call_profile`` and ``together``: as ``bench_workloads`` takes them."""
    results: dict[str, Any] = {"versions": versions()}
    if "kernels" in sections:
        results["cases"] = {}
        for name, (fn, shapes) in CASES.items():
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            torch._dynamo.reset()
            results["cases"][name] = bench_case(fn, shapes)
        save(results)
    if "allocation" in sections:
        print("[bench] allocation ...", file=sys.stderr, flush=True)
        results["allocation"] = bench_allocation()
        save(results)
    if "extern-calls" in sections:
        results["extern_calls"] = bench_extern_calls()
        save(results)
    if "launch-bound" in sections:
        results["launch_bound"] = bench_launch_bound()
        save(results)
    if "workloads" in sections:
        if warm_jobs:
            warm_compile_caches(only, warm_jobs)
        results["workloads"] = bench_workloads(
            save=lambda rows: save({**results, "workloads": rows}),
            only=only,
            repeat=repeat,
            first_call_profile=first_call_profile,
            together=together,
        )
        save(results)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python torch_acc/benchmarks/gpu.py", description=__doc__)
    parser.add_argument(
        "--json", type=Path, help="also write the results here (after each section)"
    )
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated, of {', '.join(SECTIONS)} (default: all)",
    )
    parser.add_argument(
        "--workloads",
        default="",
        metavar="TEXT",
        help="only the workload rows whose name has TEXT (alternatives separated by |)",
    )
    parser.add_argument(
        "--warm",
        type=int,
        default=0,
        metavar="JOBS",
        help="compile the workload rows JOBS processes at a time before timing them one by one",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        metavar="N",
        help="time each workload row in N processes per device, the devices alternating "
        "(each device's time: the median of its processes'; the verdict also weighs the "
        "fastest and the slowest pair)",
    )
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="only compile the selected workload rows (--warm JOBS at a time, default 4): "
        "fills the compile caches for a later run, as beside a machine's other work",
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="each timed process runs every selected workload row in turn (a process's "
        "start and compile-cache reads paid once, not once per row; no profiler tables)",
    )
    parser.add_argument(
        "--first-call-profile",
        action="store_true",
        help="with each workload row, where each device's first call goes (cProfile, "
        "cumulative time; it slows that call down)",
    )
    parser.add_argument(
        "--render",
        nargs="+",
        type=Path,
        metavar="JSON",
        help="print the tables of results saved with --json (merged in order); no GPU needed",
    )
    parser.add_argument(
        "--pool",
        action="store_true",
        help="with --render: the files time the same rows in more processes (one run split "
        "across calls): pool each row's processes instead of keeping the last file's",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="run each workload once on the CPU at small sizes, untimed (no GPU needed)",
    )
    parser.add_argument(
        "--launch-bound-child", nargs=2, metavar=("DEVICE", "MODE"), help=argparse.SUPPRESS
    )
    parser.add_argument("--extern-calls-child", metavar="DEVICE", help=argparse.SUPPRESS)
    parser.add_argument(
        "--workload-child", nargs=2, metavar=("NAMES", "DEVICE"), help=argparse.SUPPRESS
    )
    parser.add_argument("--compile-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sections = tuple(s for s in args.sections.split(",") if s)
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections: {', '.join(unknown)} (known: {', '.join(SECTIONS)})")
    if args.render:
        print(render(pool(args.render) if args.pool else merge(args.render)))
        return 0

    # A child imports torch_acc only to measure acc: a process that imports a
    # PrivateUse1 backend cannot run CUDA's backward (docs/performance.md, "One
    # accelerator per process").
    if args.launch_bound_child:
        print(json.dumps(launch_bound_child(*args.launch_bound_child)))
        return 0
    if args.extern_calls_child:
        print(json.dumps(extern_calls_child(args.extern_calls_child)))
        return 0
    if args.workload_child:
        names, device = args.workload_child
        print(
            json.dumps(
                workloads_child(
                    names.split(ROW_SEPARATOR),
                    device,
                    dry_run=args.dry_run,
                    compile_only=args.compile_only,
                    first_call_profile=args.first_call_profile,
                    profile=not args.no_profile,
                )
            )
        )
        return 0
    import torch_acc

    if args.dry_run:
        rows = bench_workloads(dry_run=True, only=args.workloads, together=args.together)
        for name, runs in rows.items():
            outcome = (
                f"FAILED: {runs['error']}"
                if "error" in runs
                else f"ran on the cpu, output norm {runs['cpu']['norm']:.4g}"
            )
            print(f"{name}: {outcome}")
        return int(any("error" in runs for runs in rows.values()))

    if torch_acc.mode != "cuda":
        print("error: acc is not over CUDA memory (TORCH_ACC_MODE=cuda)", file=sys.stderr)
        return 1

    def save(results: dict[str, Any]) -> None:
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    if args.warm_only:
        warm_compile_caches(args.workloads, args.warm or 4)
        return 0
    if args.repeat < 1:
        parser.error("--repeat takes a positive number of processes")
    results = measure(
        sections,
        save,
        only=args.workloads,
        warm_jobs=args.warm,
        repeat=args.repeat,
        first_call_profile=args.first_call_profile,
        together=args.together,
    )
    print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
