"""The {bench} role and {bench-table} directive: figures read from the recorded
benchmark files, and a loud error for anything they do not hold."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest


DOCS = Path(__file__).resolve().parents[1]
BENCH = DOCS / "_generated" / "bench"
sys.path.insert(0, str(DOCS / "_ext"))

from bench_figures import BenchError, figure, table_markdown  # noqa: E402


NBSP = "\N{NO-BREAK SPACE}"


def text(ref: str) -> str:
    return figure(BENCH, ref)[0]


def test_a_ratio_and_a_scaled_time_come_from_bench_json() -> None:
    data = json.loads((BENCH / "bench.json").read_text())
    case = next(r for r in data["results"] if r["case"] == "is_gpu")
    assert text("is_gpu:ratio") == f"{case['ratio']:.3g}"
    assert text("is_gpu:a.median:ns") == f"{case['a']['median'] * 1e9:.0f}{NBSP}ns"
    assert text("machine:cpus") == str(data["machine"]["cpus"])


def test_gpu_cases_by_their_first_word_and_units_from_field_names() -> None:
    data = json.loads((BENCH / "gpu" / "bench.json").read_text())
    mlp = next(v for k, v in data["cases"].items() if k.startswith("mlp "))
    assert text("gpu/mlp:ratio") == f"{mlp['ratio']:.3g}"
    assert text("gpu/mlp:acc_ms:ms:.3f") == f"{mlp['acc_ms']:.3f}{NBSP}ms"
    assert text("gpu/versions:torch") == data["versions"]["torch"].replace(" ", NBSP)


def test_units_scale_times_and_format_ratios(tmp_path: Path) -> None:
    (tmp_path / "history.json").write_text(
        json.dumps({"r": {"t_us": 1500, "ratio": 119.04, "few": [0.9721, 1.0224], "n": 3000}})
    )
    assert figure(tmp_path, "history/r:t_us")[0] == f"1.5{NBSP}ms"
    assert figure(tmp_path, "history/r:t_us:us")[0] == f"1500{NBSP}us"
    assert figure(tmp_path, "history/r:ratio:x")[0] == "119x"
    assert figure(tmp_path, "history/r:few:.3f")[0] == "0.972, 1.022"
    assert figure(tmp_path, "history/r:n")[0] == "3000"


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no_such_case:ratio", "no 'no_such_case' in bench.json; known: "),
        ("is_gpu:a.mean", "bench.json: a has no 'mean' (it has: label, min, median, max"),
        ("is_gpu:ratio:ms", "is not a time; it cannot be shown in ms"),
        ("is_gpu:a.median:x", "is a time (s); 'x' is for ratios"),
        ("is_gpu:a.median:furlongs", "unknown unit 'furlongs'"),
        ("is_gpu:a.label:s", "is text ('stacked'); it takes no unit"),
        ("is_gpu:a", "is not a figure (a dict)"),
        ("cpu/is_gpu:ratio", "unknown source"),
        ("is_gpu", "write [gpu/|history/]OBJECT:FIELD"),
        ("gpu/no_such_case:ratio", "no 'no_such_case' in gpu/bench.json"),
    ],
)
def test_an_unknown_reference_is_an_error_that_says_what_exists(ref: str, message: str) -> None:
    with pytest.raises(BenchError, match=re.escape(message)):
        figure(BENCH, ref)


def test_the_history_table_renders_every_row() -> None:
    data = json.loads((BENCH / "history.json").read_text())
    markdown, _ = table_markdown(BENCH, "history/host_mode_steps")
    lines = markdown.splitlines()
    assert len(lines) == 2 + len(data["host_mode_steps"]["rows"])
    assert lines[2].startswith("| as first measured | 767")


def test_the_role_fails_the_build(tmp_path: Path) -> None:
    """An unknown case is an error Sphinx reports at the role's line."""
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    (src / "_generated").mkdir(parents=True)
    (src / "_generated" / "bench").symlink_to(BENCH)
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['myst_parser', 'bench_figures']\n"
    )
    (src / "index.md").write_text("# T\n\nok {bench}`is_gpu:ratio`, bad {bench}`nope:ratio`\n")
    warnings = tmp_path / "warnings.txt"
    with warnings.open("w") as stream:
        app = Sphinx(src, src, tmp_path / "out", tmp_path / "doctrees", "html", warning=stream)
        app.build()
    log = warnings.read_text()
    assert "index.md:3: ERROR: bench: no 'nope' in bench.json" in log
    html = (tmp_path / "out" / "index.html").read_text()
    assert f"ok {text('is_gpu:ratio')}" in re.sub(r"<[^>]+>", "", html)
