"""The trace tool's reading of two devices' traces and its choice of a row
(torch_acc/benchmarks/trace_workload.py); no GPU needed."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pytest


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def trace_workload(monkeypatch: pytest.MonkeyPatch):
    # The tool runs as a script: its modules import each other from its folder.
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(
        "trace_workload", BENCHMARKS / "trace_workload.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kernel(name: str, dur: float, threads: int, blocks: int, registers: int) -> dict:
    return {
        "ph": "X",  # a complete event, as the profiler writes a kernel
        "cat": "kernel",
        "name": name,
        "dur": dur,
        "args": {
            "block": [threads, 1, 1],
            "grid": [blocks, 1, 1],
            "registers per thread": registers,
        },
    }


def _trace(path: Path, events: list[dict]) -> Path:
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": events}, f)
    return path


def test_kernels_names_a_kernel_launched_with_another_configuration(
    tmp_path: Path, trace_workload
) -> None:
    cuda = _trace(
        tmp_path / "cuda.json.gz",
        [_kernel("triton_poi_gelu", 14.6, 128, 9456, 32), _kernel("mm", 30.0, 256, 64, 90)],
    )
    acc = _trace(
        tmp_path / "acc.json.gz",
        [_kernel("triton_poi_gelu", 19.1, 256, 18912, 18), _kernel("mm", 30.2, 256, 64, 90)],
    )
    text = trace_workload.kernels([cuda, acc])
    assert "1 kernels launched with other configurations" in text
    gelu = [line for line in text.splitlines() if line.startswith("triton_poi_gelu")]
    assert len(gelu) == 2  # its times, then its launch configurations
    assert "128t x 9456b, 32r" in gelu[1] and "256t x 18912b, 18r" in gelu[1]
    assert not any(line.startswith("mm ") and "t x" in line for line in text.splitlines())


def test_kernels_says_so_where_every_launch_is_the_same(tmp_path: Path, trace_workload) -> None:
    same = [_kernel("mm", 30.0, 256, 64, 90)]
    text = trace_workload.kernels(
        [_trace(tmp_path / "a.json.gz", same), _trace(tmp_path / "b.json.gz", same)]
    )
    assert text.endswith("same launch configuration for every kernel the traces share")


def test_a_row_is_named_by_the_beginning_of_its_name(trace_workload) -> None:
    import gpu_workloads

    rows = [r for r in gpu_workloads.WORKLOADS if r.startswith("training step bf16 4x128")]
    assert len(rows) == 1
    # Also part of "masked attention training step bf16 4x128x256 (host-bound)".
    assert len(gpu_workloads.selected_rows("training step bf16 4x128")) > 1
    assert trace_workload._row("training step bf16 4x128") == rows[0]
    with pytest.raises(SystemExit, match="names 0 workload rows"):
        trace_workload._row("no such row")


def test_cached_autotuning_choices_are_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace_workload
) -> None:
    import gpu

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    kernel = tmp_path / "ab" / "triton_poi_gelu.py"
    kernel.parent.mkdir()
    kernel.write_text("# a kernel")
    (tmp_path / "ab" / "triton_poi_gelu.best_config").write_text('{"XBLOCK": 512}')
    assert gpu.drop_autotuning_choices() == 1
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["triton_poi_gelu.py"]
