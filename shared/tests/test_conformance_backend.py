"""The backend under test, as the probe resolves it before probing: a name no
device string can hold, a ``--backend`` module that autoload got ahead of,
and a PrivateUse1 backend of another package."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rfc_shared.conformance.backend import NAME_RULE, UnusableBackend, check_name
from rfc_shared.testing.helpers import run_python


def _vendor(root: Path, package: str, device: str) -> None:
    """A backend package that renames PrivateUse1 to ``device`` on import,
    with a ``compiler`` module that says when it is imported."""
    (root / package).mkdir()
    (root / package / "__init__.py").write_text(
        textwrap.dedent(
            f"""
            import types
            import torch

            module = types.ModuleType({package!r} + ".device")
            module.is_available = lambda: True
            module.device_count = lambda: 1
            torch.utils.rename_privateuse1_backend({device!r})
            torch._register_device_module({device!r}, module)
            """
        )
    )
    (root / package / "compiler.py").write_text("print('compiler imported')\n")


def _probe(root: Path, first: str | None, *args: str, slices: str = "all"):
    """The probe's ``main`` with ``args``, after importing ``first`` (as
    autoload does at ``import torch``); its exit status and output."""
    code = "import sys, torch\n"
    if first:
        code += f"import {first}\n"
    code += (
        f"sys.argv[1:] = {list(args)!r}\n"
        "from rfc_shared.conformance.__main__ import main\n"
        "print('exit', main())\n"
    )
    return run_python(code, env={"PYTHONPATH": f"{root}:{_pythonpath()}"}, slices=slices)


def _pythonpath() -> str:
    import os

    return os.environ.get("PYTHONPATH", "")


def test_a_name_with_a_digit_breaks_the_rule_torch_device_applies() -> None:
    check_name("npu")
    check_name("my_npu")
    with pytest.raises(UnusableBackend, match=NAME_RULE):
        check_name("npu3")


@pytest.mark.parametrize("slices", ["none", "all"])
def test_the_probe_refuses_an_impossible_name_at_once_with_the_rule(
    tmp_path: Path, slices: str
) -> None:
    _vendor(tmp_path, "vendor_npu", "npu3")
    done = _probe(tmp_path, None, "--backend", "vendor_npu", "--matrix", slices=slices)
    assert "exit 2" in done.stdout
    assert f"renamed to 'npu3', which no torch.device accepts: {NAME_RULE}" in done.stderr
    assert "probing" not in done.stderr  # no column was started


def test_backend_names_a_module_that_autoload_got_ahead_of(tmp_path: Path) -> None:
    _vendor(tmp_path, "vendor_x", "xdev")
    done = _probe(tmp_path, "vendor_x", "--backend", "vendor_x.compiler", "--probes", "rfc1.is_gpu")
    assert "compiler imported" in done.stdout
    assert "exit 0" in done.stdout


def test_backend_naming_another_package_than_the_one_autoloaded_fails_loudly(
    tmp_path: Path,
) -> None:
    _vendor(tmp_path, "vendor_x", "xdev")
    _vendor(tmp_path, "vendor_y", "ydev")
    done = _probe(tmp_path, "vendor_x", "--backend", "vendor_y", "--probes", "rfc1.is_gpu")
    assert "exit 2" in done.stdout
    assert "PrivateUse1 is already 'xdev', set up by vendor_x" in done.stderr
