"""The backend-author guide's minimal backends, built from the page alone.

Section 9 of ``docs/backend-guide.md`` shows every file of ``docs/examples/``
whole. These tests read the page, copy exactly the files it shows into a fresh
folder, build them with the page's command and compile the four cases with
each backend, so that a file the page leaves out, or cuts, fails here.

The build goes to ``docs/_build/examples``, the folder the docs build uses:
``install.py`` builds again only when the sources it is given differ from the
ones built there, so after the docs build the assembled copy, if it is the
same bytes, is not compiled twice.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest


DOCS = Path(__file__).resolve().parents[1]
PAGE = DOCS / "backend-guide.md"
EXAMPLES = DOCS / "examples"
DIRECTIVE = re.compile(r"```\{literalinclude\} examples/(?P<path>\S+)\n(?P<options>(?::.*\n)*)```")
CASES = ["pointwise True", "mlp True", "softmax True"]


def shown() -> dict[str, str]:
    """Each example file the page includes -> the options it includes it with:
    its whole include's, where the page also shows a part of it elsewhere."""
    found: dict[str, str] = {}
    for m in DIRECTIVE.finditer(PAGE.read_text(encoding="utf-8")):
        whole = {line.split(":")[1] for line in m["options"].splitlines()} <= {"language"}
        if whole or m["path"] not in found:
            found[m["path"]] = m["options"]
    return found


def test_every_example_file_is_shown_whole() -> None:
    files = {
        str(p.relative_to(EXAMPLES))
        for p in EXAMPLES.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    includes = shown()
    assert set(includes) == files
    for path, options in includes.items():
        names = {line.split(":")[1] for line in options.splitlines()}
        assert names <= {"language"}, f"{path} is included with {names}, not whole"


@pytest.fixture(scope="module")
def checks(
    tmp_path_factory: pytest.TempPathFactory, minimal: SimpleNamespace
) -> dict[str, tuple[int, str, str]]:
    """The files the page shows, in a fresh folder, built; then check.py on
    each backend, in two processes side by side: package -> (returncode,
    stdout, stderr)."""
    root = tmp_path_factory.mktemp("guide") / "examples"
    for path in shown():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(EXAMPLES / path, root / path)
    minimal.build(root)
    return minimal.side_by_side(
        {p: [str(root / "check.py"), p] for p in ("minimal_host", "minimal_gpu")}
    )


@pytest.mark.parametrize(
    ("package", "device"), [("minimal_host", "mhost"), ("minimal_gpu", "mgpu")]
)
def test_the_four_cases_compile(checks: dict, package: str, device: str) -> None:
    returncode, out, err = checks[package]
    assert returncode == 0, err[-3000:]
    assert out.splitlines() == [*CASES, f"second device {device}:1 True"]
