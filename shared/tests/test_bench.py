"""The benchmark cases still run: each once, in smoke mode (figures mean
nothing there; `nox -s bench` measures)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rfc_shared.bench.cases import CASES


@pytest.mark.parametrize("name", list(CASES))
def test_the_case_runs(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rfc_shared.bench", "--smoke", "--cases", name],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"| {name} |" in done.stdout


def test_a_smoke_run_writes_nothing(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rfc_shared.bench", "--smoke", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "--smoke writes nothing" in done.stderr
    assert not any(tmp_path.iterdir())
