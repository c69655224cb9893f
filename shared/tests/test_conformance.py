"""The conformance probe's own behaviour: its registry, its columns, its output."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

from rfc_shared.conformance.probes import load
from rfc_shared.overlay.roster import installed
from rfc_shared.testing.helpers import run_python


SITES = [
    "registry_core.register_privateuse1",
    "rfc1.is_gpu",
    "rfc1.gpu_types",
    "rfc1.get_gpu_type",
    "rfc1.has_triton",
    "rfc1.device_need_guard",
    "rfc1.multi_processor_count",
    "rfc2.tensor_classes",
    "rfc2.trace_rules",
    "rfc2.constant_fold",
    "rfc2.constant_types",
    "rfc3.backend_discovery",
    "rfc3.config_keys",
    "rfc3.cpp_options",
    "rfc3.aten_device_type",
    "rfc3.visible_devices_env",
    "rfc3.cache_key",
    "rfc3.two_pass_gate",
    "rfc3.e2e_compile",
    "lazy_reg.device_module_hook",
    "backend_feature.gpu",
]

# What acc over host memory lacks: graphs to record, and a C++ wrapper of GPU
# kernels (interpreted kernels have no binaries) to declare streams in or to
# build an AOTInductor package with.
NOT_APPLICABLE_TO_ACC_ON_HOST = {"graph_capture.record", "rfc3.stream_type", "aoti.package"}


def conformance(*args: str, slices: str = "none") -> dict:
    args = ("--backend", "torch_acc", *args)
    done = run_python(
        f"import sys; sys.argv[1:] = {list(args)!r}\n"
        "from rfc_shared.conformance.__main__ import main; main()",
        slices=slices,
        env={"TRITON_INTERPRET": "1"},
    )
    return json.loads(done.stdout)


def test_every_site_the_rfcs_name_has_a_probe() -> None:
    assert set(SITES) <= set(load())
    probed = {p.slice for p in load().values()}
    # Every slice has probes; a follow-up PR may (fake_channels_last) or not.
    assert {s.name for s in installed().main()} <= probed
    assert probed <= set(installed().names())


def test_on_stock_torch_every_probe_fails_with_evidence_unless_upstream_landed_it() -> None:
    from rfc_shared.overlay.base import installed_torch_base

    def release(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split("."))

    installed = release(installed_torch_base().version)
    report = conformance("--format", "json", "--evidence")
    assert set(report["probes"]) == set(load())
    statuses = {probe: columns["stock"] for probe, columns in report["probes"].items()}
    landed = {
        name for name, p in load().items() if p.landed_in and release(p.landed_in) <= installed
    }
    assert {statuses[p] for p in landed - NOT_APPLICABLE_TO_ACC_ON_HOST} <= {"pass"}, statuses
    # "n/a" is the backend's own answer (acc on host memory declares no graph
    # capture), so it holds with and without the slices; everything else fails.
    assert {s for p, s in statuses.items() if p not in landed} <= {"fail", "n/a"}, statuses
    assert "fail" in statuses.values()
    assert {p for p, s in statuses.items() if s == "n/a"} <= NOT_APPLICABLE_TO_ACC_ON_HOST
    assert all(report["evidence"][p]["stock"] for p in load())
    assert report["evidence"]["rfc1.is_gpu"]["stock"] == (
        "is_gpu('acc') does not follow the DeviceInterface: False where the interface says "
        "is_gpu() is True (expected True); False where the interface says is_gpu() is False "
        "(expected False)"
    )


def test_the_matrix_runs_each_column_in_its_own_interpreter(tmp_path: Path) -> None:
    probes = "registry_core.register_privateuse1,registry_core.indexed_lookup,rfc1.is_gpu"
    markdown = tmp_path / "conformance.md"
    report = conformance(
        "--matrix",
        "--columns",
        "stock,registry_core",
        "--probes",
        probes,
        "--format",
        "json",
        "--markdown",
        str(markdown),
    )
    assert report["probes"] == {
        "registry_core.register_privateuse1": {"stock": "fail", "registry_core": "pass"},
        "registry_core.indexed_lookup": {"stock": "fail", "registry_core": "pass"},
        "rfc1.is_gpu": {"stock": "fail", "registry_core": "fail"},
    }
    table = markdown.read_text()
    assert "| `registry_core.indexed_lookup` |" in table and "| stock | registry_core |" in table


def test_the_matrix_probes_columns_at_once_and_keeps_their_order(monkeypatch) -> None:
    from rfc_shared.conformance import matrix

    started: list[str] = []
    first_may_finish = threading.Event()

    def probe_column(
        column: str, probes: object, kernel_cache: str | None = None, backend: str | None = None
    ) -> dict[str, dict[str, str]]:
        started.append(column)
        if column == "stock":  # finishes last, once the second column has started
            assert first_may_finish.wait(timeout=30), "the columns ran one after another"
        else:
            first_may_finish.set()
        return {"rfc1.is_gpu": {"status": "pass", "evidence": column}}

    monkeypatch.setattr(matrix, "probe_column", probe_column)
    lines: list[str] = []
    table = matrix.build(["stock", "stacked"], ["rfc1.is_gpu"], lines.append, workers=2)
    assert list(table["rfc1.is_gpu"]) == ["stock", "stacked"]
    assert sorted(started) == ["stacked", "stock"]
    assert lines[-1].startswith("[2/2] stock ... ")


def test_the_matrix_has_no_column_for_a_slice_without_a_series_for_this_torch(
    monkeypatch,
) -> None:
    from rfc_shared.conformance import matrix
    from rfc_shared.overlay import base

    # A torch no slice has a series for: which slices have which series changes
    # as ports land, so the test does not depend on it.
    unserved = object()
    monkeypatch.setattr(base, "installed_torch_base", lambda: unserved)
    assert all(unserved not in s.bases for s in installed())
    assert matrix.columns() == ["stock", "stacked"]


def test_the_text_output_gives_the_evidence_of_each_failure_and_what_to_do() -> None:
    done = run_python(
        "import sys; sys.argv[1:] = ['--backend', 'torch_acc', '--probes', "
        "'rfc1.is_gpu,graph_capture.record']\n"
        "from rfc_shared.conformance.__main__ import main; main()",
        slices="none",
        env={"TRITON_INTERPRET": "1"},
    )
    lines = done.stdout.splitlines()
    failure = lines.index(next(line for line in lines if line.startswith("FAIL rfc1.is_gpu")))
    assert lines[failure].startswith("FAIL rfc1.is_gpu [stock]: is_gpu('acc') does not follow")
    assert lines[failure + 1] == "    what to do: this torch lacks it: the rfc1 slice brings it."
    assert any(line.startswith("n/a graph_capture.record [stock]: ") for line in lines)


def test_evidence_advice_is_read_from_the_other_columns() -> None:
    from rfc_shared.conformance import evidence

    matrix = {
        "rfc1.is_gpu": {
            "stock": {"status": "fail", "evidence": "no"},
            "rfc2": {"status": "fail", "evidence": "no"},
            "rfc1": {"status": "fail", "evidence": "still no"},
            "stacked": {"status": "pass", "evidence": "yes"},
        },
        "rfc1.is_cpu": {
            "rfc2": {"status": "fail", "evidence": "no"},
            "rfc1": {"status": "pass", "evidence": "yes"},
            "stacked": {"status": "pass", "evidence": "yes"},
        },
        "rfc3.e2e_compile": {"stacked": {"status": "error", "evidence": "Boom: x"}},
        "rfc3.second_device": {
            "stock": {"status": "fail", "evidence": "on acc:0"},
            "rfc1": {"status": "pass", "evidence": "on acc:1"},
            "stacked": {"status": "pass", "evidence": "on acc:1"},
        },
        "rfc3.reduction": {
            "rfc3": {"status": "fail", "evidence": "InductorError: AssertionError: boom"},
            "stacked": {"status": "fail", "evidence": "InductorError: AssertionError: boom"},
        },
        "rfc1.identity": {
            "stock": {"status": "pass", "evidence": "yes"},
            "rfc1": {"status": "fail", "evidence": "no"},
        },
        "rfc2.wrap": {
            "stock": {"status": "fail", "evidence": "no"},
            "stacked": {"status": "fail", "evidence": "not wrapped"},
        },
    }
    text = evidence.as_text(matrix).splitlines()

    def advice_of(line: str) -> str:
        return text[text.index(line) + 1].removeprefix("    what to do: ")

    # The smallest column that passes names what is missing, not a guess.
    assert advice_of("FAIL rfc1.is_gpu [stock]: no").startswith(
        "passes in the stacked column: apply "
    )
    assert "rfc2," not in advice_of("FAIL rfc1.is_gpu [rfc2]: no")  # rfc2 is there already
    # On top of rfc2 only the stacked column passes; rfc1 alone, with fewer slices, passes too.
    assert advice_of("FAIL rfc1.is_cpu [rfc2]: no").endswith(
        "The rfc1 column passes with fewer: registry_core, rfc1."
    )
    assert advice_of("FAIL rfc3.second_device [stock]: on acc:0").startswith(
        "passes in the rfc1 column: apply "
    )
    # Inside torch's compiler: a bug to report, in every column.
    assert advice_of(
        "FAIL rfc3.reduction [rfc3, stacked]: InductorError: AssertionError: boom"
    ).startswith("the failure is inside torch (InductorError)")
    # A slice that breaks what stock torch does.
    assert advice_of("FAIL rfc1.identity [rfc1]: no").startswith(
        "passes in the stock column, so applying "
    )
    # Passing nowhere, with the slice applied: the backend's to fix.
    assert advice_of("FAIL rfc2.wrap [stacked]: not wrapped").startswith(
        "the rfc2 slice is applied and no column passes, so the backend lacks"
    )
    assert (
        advice_of("FAIL rfc2.wrap [stock]: no") == "this torch lacks it: the rfc2 slice brings it."
    )
    assert advice_of("ERROR rfc3.e2e_compile [stacked]: Boom: x").startswith(
        "the probe could not run here"
    )
    assert evidence.as_text({"rfc1.is_gpu": {"stock": {"status": "pass", "evidence": ""}}}) == ""


def test_a_slice_that_fails_its_own_probe_alone_is_named() -> None:
    from rfc_shared.conformance.matrix import failing_alone

    def cell(status: str) -> dict[str, str]:
        return {"status": status, "evidence": ""}

    table = {
        "rfc3.e2e_compile": {"stock": cell("fail"), "rfc3": cell("fail"), "stacked": cell("pass")},
        "rfc1.is_gpu": {"stock": cell("fail"), "rfc1": cell("pass"), "rfc3": cell("fail")},
        "rfc2.stream_tracing": {"rfc2": cell("n/a")},
        "aoti.run": {"stock": cell("fail"), "stacked": cell("error")},
        "rfc2.trace_rules": {"rfc2": cell("error")},
    }
    assert failing_alone(table) == [
        "rfc3.e2e_compile in rfc3: FAIL",
        "rfc2.trace_rules in rfc2: ERROR",
    ]


def test_follow_ups_get_no_matrix_column() -> None:
    from rfc_shared.conformance import matrix

    followups = [s.name for s in installed() if s.followup_of]
    assert followups
    assert not set(followups) & set(matrix.columns())


def test_progress_gives_each_column_its_time_and_what_is_left() -> None:
    from rfc_shared.conformance.matrix import estimate_left, progress_line

    assert progress_line(3, 9, "rfc2", 41.2, 120.0) == "[3/9] rfc2 ... 41 s, about 2 min left"
    assert progress_line(9, 9, "stacked", 12.0, 0.0) == "[9/9] stacked ... 12 s"
    assert estimate_left([30.0, 50.0], 6, workers=2) == 120.0  # 6 columns of 40 s, 2 at a time
    assert estimate_left([30.0, 50.0], 1, workers=2) == 40.0  # the last one runs alone


def test_the_columns_share_compiled_kernels_and_nothing_keyed_by_torchs_files(
    monkeypatch,
) -> None:
    from rfc_shared.conformance import matrix

    caches: dict[str, str | None] = {}

    def probe_column(
        column: str, probes: object, kernel_cache: str | None = None, backend: str | None = None
    ) -> dict:
        caches[column] = kernel_cache
        return {"rfc1.is_gpu": {"status": "pass", "evidence": column}}

    monkeypatch.setattr(matrix, "probe_column", probe_column)
    matrix.build(["stock", "rfc1", "stacked"], ["rfc1.is_gpu"], workers=2)
    assert len(set(caches.values())) == 1 and None not in caches.values()
    env = matrix._column_env("rfc1", "/shared-kernels", "/fresh")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == "/shared-kernels"
    assert env["TORCHINDUCTOR_FX_GRAPH_CACHE"] == "0"
    assert env["TORCHINDUCTOR_AUTOGRAD_CACHE"] == "0"


def test_the_backend_reaches_each_column_as_an_argument(monkeypatch) -> None:
    from rfc_shared.conformance import backend, matrix
    from rfc_shared.conformance.__main__ import main

    monkeypatch.delenv(backend.ENV_BACKEND, raising=False)
    try:
        assert main(["--backend", "torch_sealed", "--list"]) == 0
        assert backend.backend_package() == "torch_sealed"
    finally:
        backend.choose_backend(None)
    assert backend.ENV_BACKEND not in os.environ  # chosen for this process only

    seen: dict[str, object] = {}

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        seen["command"], seen["env"] = command, kwargs["env"]
        report = {
            "probes": {"rfc1.is_gpu": {"rfc1": "pass"}},
            "evidence": {"rfc1.is_gpu": {"rfc1": "ok"}},
        }
        return subprocess.CompletedProcess(command, 0, json.dumps(report), "")

    monkeypatch.setattr(matrix.subprocess, "run", run)
    outcome = matrix.probe_column("rfc1", ["rfc1.is_gpu"], backend="torch_sealed")
    assert outcome == {"rfc1.is_gpu": {"status": "pass", "evidence": "ok"}}
    command = seen["command"]
    assert command[command.index("--backend") + 1] == "torch_sealed"
    assert backend.ENV_BACKEND not in seen["env"]


def test_the_probe_imports_nothing_made_for_tests() -> None:
    """What the probe runs (its package and every slice's probes) never imports
    ``rfc_shared.testing``, the kit for tests, which may import the probe's."""
    import ast
    import importlib.util

    import rfc_shared.conformance

    sources = list(Path(rfc_shared.conformance.__file__).parent.glob("*.py"))
    for slice_ in installed():
        spec = importlib.util.find_spec(f"{slice_.package}.probes")
        if spec is not None and spec.origin:
            sources.append(Path(spec.origin))
    assert len(sources) > 10
    imports = {
        (source.name, (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name)
        for source in sources
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not {
        (name, module)
        for name, module in imports
        if (module or "").startswith("rfc_shared.testing")
    }
