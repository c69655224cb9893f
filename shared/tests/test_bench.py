"""The benchmark cases still run: each once, in smoke mode (figures mean
nothing there; `nox -s bench` measures)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rfc_shared.bench.cases import CASES
from rfc_shared.testing.helpers import KERNEL_CACHE_VAR


@pytest.mark.parametrize("name", list(CASES))
def test_the_case_runs(name: str) -> None:
    # The run's kernel cache: a C++ kernel one case compiled serves the others.
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": os.environ[KERNEL_CACHE_VAR]}
    done = subprocess.run(
        [sys.executable, "-m", "rfc_shared.bench", "--smoke", "--cases", name],
        capture_output=True,
        text=True,
        env=env,
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
