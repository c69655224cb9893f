"""The GPU benchmark's verdict on a row: the median ratio and the spread of
its processes together (torch_acc/benchmarks/gpu_report.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(autouse=True)
def benchmarks_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    # gpu.py runs as a script: its modules import each other from its folder.
    monkeypatch.syspath_prepend(str(BENCHMARKS))


def _gpu_bench(name: str = "gpu_report"):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(cuda: list[float], acc: list[float]) -> dict:
    median = sorted(cuda)[len(cuda) // 2] / sorted(acc)[len(acc) // 2]
    return {
        "cuda": {"ms": 0.0, "ms_by_process": cuda},
        "acc": {"ms": 0.0, "ms_by_process": acc},
        "ratio": median,
    }


@pytest.mark.parametrize(
    ("cuda", "acc", "expected"),
    [
        # Every pairing at or above the goal.
        ([10.0, 10.2, 10.1, 10.3, 10.0], [10.1, 10.2, 10.0, 10.4, 10.1], "met"),
        # Below the goal whichever processes are compared.
        ([8.0, 8.1, 8.2, 8.0, 8.1], [10.0, 10.1, 10.2, 10.0, 10.1], "MISSED"),
        # The median misses, but the fastest processes agree: the processes decide nothing.
        ([8.2, 9.9, 14.2, 9.0, 8.9], [8.3, 10.0, 14.0, 9.9, 9.7], "undecided"),
    ],
)
def test_a_row_is_called_below_the_goal_only_where_its_spread_is(
    cuda: list[float], acc: list[float], expected: str
) -> None:
    gpu = _gpu_bench()
    assert gpu.verdict(_row(cuda, acc)) == expected


def test_the_spread_is_the_fastest_and_the_slowest_pairs() -> None:
    gpu = _gpu_bench()
    low, high = gpu.ratio_spread(_row([8.0, 12.0], [10.0, 10.0]))
    assert (low, high) == pytest.approx((0.8, 1.2))


def test_timed_and_compile_processes_get_disjoint_cores() -> None:
    compile_cores, timed_cores = _gpu_bench("gpu")._core_halves()
    assert timed_cores
    assert not compile_cores & timed_cores or compile_cores == timed_cores


def _saved_run(path: Path, versions: dict, rows: dict) -> Path:
    path.write_text(json.dumps({"versions": versions, "workloads": rows}), encoding="utf-8")
    return path


def test_a_run_split_across_calls_pools_each_rows_processes(tmp_path: Path) -> None:
    gpu = _gpu_bench()
    name, other = list(gpu.WORKLOADS)[:2]
    versions = {"gpu": "1 x H100", "torch": "2.11.0"}

    def measured(cuda: list[float], acc: list[float]) -> dict:
        return {
            "cuda": {"ms": 0.0, "ms_by_process": cuda, "norm": 1.0},
            "acc": {"ms": 0.0, "ms_by_process": acc, "norm": 1.0},
        }

    first = _saved_run(
        tmp_path / "a.json",
        versions,
        {name: measured([10.0, 12.0], [11.0, 13.0]), other: measured([1.0], [1.0])},
    )
    second = _saved_run(
        tmp_path / "b.json",
        versions,
        {name: measured([14.0], [9.0]), other: {"error": "acc: RuntimeError: boom"}},
    )
    pooled = gpu.pool([first, second])["workloads"]
    assert pooled[name]["cuda"]["ms_by_process"] == [10.0, 12.0, 14.0]
    assert pooled[name]["acc"]["ms_by_process"] == [11.0, 13.0, 9.0]
    assert pooled[name]["ratio"] == pytest.approx(12.0 / 11.0)
    # A row that failed in one call failed.
    assert pooled[other] == {"error": "acc: RuntimeError: boom"}


def test_runs_of_different_machines_are_not_pooled(tmp_path: Path) -> None:
    gpu = _gpu_bench()
    runs = [
        _saved_run(tmp_path / f"{gpu_name}.json", {"gpu": gpu_name}, {})
        for gpu_name in ("H100", "H200")
    ]
    with pytest.raises(ValueError, match="different machines"):
        gpu.pool(runs)
