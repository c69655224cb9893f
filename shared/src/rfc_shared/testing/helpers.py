"""Helpers for tests: throwaway slices and patches, fresh interpreters."""

from __future__ import annotations

import contextlib
import difflib
import json
import linecache
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rfc_shared import selection
from rfc_shared.overlay.base import TorchBase, installed_torch_base, torch_package_dir
from rfc_shared.overlay.slices import SERIES_FILE, Slice


if TYPE_CHECKING:
    from rfc_shared.overlay import Activation


def format_patch(path: str, old: str | None, new: str, subject: str = "Test change") -> str:
    """A minimal ``git format-patch`` file changing (or creating) ``path``."""
    before = [] if old is None else old.splitlines(keepends=True)
    diff = difflib.unified_diff(
        before,
        new.splitlines(keepends=True),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile=f"b/{path}",
    )
    header = f"diff --git a/{path} b/{path}\n"
    if old is None:
        header += "new file mode 100644\n"
    return (
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: Test <test@example.invalid>\n"
        f"Subject: [PATCH] {subject}\n\n---\n" + header + "".join(diff)
    )


def write_slice(
    root: Path,
    name: str,
    patches: list[str],
    requires: tuple[str, ...] = (),
    base: TorchBase | None = None,
) -> Slice:
    """A slice whose series (for ``base``, default: the installed torch's)
    holds ``patches``."""
    base = installed_torch_base() if base is None else base
    folder = root / name / base.series_dir_name
    folder.mkdir(parents=True)
    names = []
    for number, text in enumerate(patches, 1):
        patch = folder / f"{number:04d}-change.patch"
        patch.write_text(text, encoding="utf-8")
        names.append(patch.name)
    (folder / SERIES_FILE).write_text("\n".join(names) + "\n", encoding="utf-8")
    return Slice(name, "unused", (base,), requires, f"test slice {name}", "0.0.1", root / name)


def write_distribution(site: Path, name: str, entry_points: str, modules: dict[str, str]) -> None:
    """An installed distribution in ``site`` (a folder to put on PYTHONPATH):
    ``modules`` (file name to source) and a dist-info declaring
    ``entry_points`` (the text of an ``entry_points.txt``)."""
    for filename, source in modules.items():
        (site / filename).write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def install_project_folder(folder: Path, site: Path) -> None:
    """What ``pip install <folder>`` puts in ``site`` for a slice folder
    (``src/<package>/`` and a ``pyproject.toml`` with hatchling's layout),
    read from its ``pyproject.toml`` (name, version, dependencies, entry
    points), without building a wheel; installing again replaces it."""
    import tomllib

    with (folder / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    for package in (folder / "src").iterdir():
        shutil.rmtree(site / package.name, ignore_errors=True)
        shutil.copytree(package, site / package.name)
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    shutil.rmtree(info, ignore_errors=True)
    info.mkdir(parents=True)
    requires = "".join(f"Requires-Dist: {r}\n" for r in project.get("dependencies", ()))
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
        + requires,
        encoding="utf-8",
    )
    groups = project.get("entry-points", {})
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
            for group, points in groups.items()
        ),
        encoding="utf-8",
    )


def pristine(path: str) -> str:
    return (torch_package_dir().parent / path).read_text(encoding="utf-8")


def overlay_footprint(activation: Activation) -> dict[str, object]:
    """What the overlay leaves in this process: its finders on
    ``sys.meta_path``, the variables subprocesses inherit, the patched text
    linecache holds and its ``clearcache``, and ``activation``'s state; a
    fresh interpreter's is the one to compare with."""
    from rfc_shared.overlay import finder

    return {
        "finders": sum(isinstance(f, finder.OverlayFinder) for f in sys.meta_path),
        "selection": os.environ.get(selection.ENV),
        "inductor_cache_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR"),
        "patched_text": sorted(finder._sources),
        "clearcache_is_stdlib": linecache.clearcache is finder._stdlib_clearcache,
        "report": activation.report(),
        "startup_outcome": [activation.settled, repr(activation.failure)],
    }


def run_python(
    code: str,
    env: dict[str, str | None] | None = None,
    check: bool = True,
    slices: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter, where the overlay arms at startup.

    ``env`` adds variables to the current environment; None removes one.
    ``slices`` is the selection the overlay serves there (``"none"``: stock
    torch); unset, the current one. A child killed by a signal dumps every
    Python thread's stack first (faulthandler), so a rare crash explains itself.
    """
    full_env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    if slices is not None:
        full_env[selection.ENV] = slices
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check and done.returncode:
        raise AssertionError(failure_report(done))
    return done


def failure_report(done: subprocess.CompletedProcess[str], tail: int = 20) -> str:
    """What a failed child printed: its exit (or the signal that killed it),
    the last lines of its stdout (did it get as far as its result?) and its
    stderr."""
    if done.returncode < 0:
        how = f"killed by {signal.Signals(-done.returncode).name}"
    else:
        how = f"exit status {done.returncode}"
    stdout = "\n".join(done.stdout.splitlines()[-tail:]) or "(nothing)"
    return f"subprocess failed ({how})\nstdout, last lines:\n{stdout}\nstderr:\n{done.stderr}"


def last_json(done: subprocess.CompletedProcess[str]) -> object:
    return json.loads(done.stdout.strip().splitlines()[-1])


#: The Inductor cache directory :func:`stock_and_overlaid` compiles into,
#: shared by every test of a pytest run and its workers (the project's pytest
#: plugin sets it); unset, each call makes its own.
KERNEL_CACHE_VAR = "RFC_TEST_KERNEL_CACHE"


@contextlib.contextmanager
def shared_kernel_cache() -> Iterator[dict[str, str]]:
    """The environment of a child that compiles into the run's shared
    Inductor cache directory (:data:`KERNEL_CACHE_VAR`; unset, a temporary
    one for the ``with`` block), the FX graph and AOTAutograd caches off: the
    child traces, lowers and generates its own code, and reuses only what was
    compiled from identical source text (C++ kernels and wrapper modules are
    keyed by a hash of it), whichever test compiled it."""
    with contextlib.ExitStack() as stack:
        cache_dir = os.environ.get(KERNEL_CACHE_VAR) or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="rfc-kernels-")
        )
        yield {
            "TORCHINDUCTOR_CACHE_DIR": cache_dir,
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
        }


def stock_and_overlaid(
    code: str, slices: str, env: dict[str, str | None] | None = None
) -> tuple[object, object]:
    """``code``'s last JSON line on stock torch and with ``slices`` served,
    each side in a fresh interpreter (``env`` added to both).

    Both sides compile into the run's :func:`shared_kernel_cache`: where the
    overlaid side's code is stock's it skips the C++ compiler; where it
    differs, it compiles its own."""
    with shared_kernel_cache() as cache:
        shared = {**cache, **(env or {})}
        stock = last_json(run_python(code, slices="none", env=shared))
        return stock, last_json(run_python(code, slices=slices, env=shared))


def dynamo_report_in_fresh_interpreter(slices: str) -> dict[str, dict[str, object]]:
    """:func:`rfc_shared.conformance.dynamo_programs.report` in a fresh
    interpreter whose overlay serves ``slices`` (a ``TORCH_RFC_SLICES`` value;
    ``"none"`` is stock torch)."""
    done = run_python(
        "from rfc_shared.conformance.dynamo_programs import main; main()", slices=slices
    )
    return last_json(done)  # type: ignore[return-value]


def corpus_report_on_cpu(backward: bool = False) -> dict[str, dict[str, list[str]]]:
    """What the invariance tests compare between stock torch and the overlay,
    for each corpus case on the CPU: Dynamo's FX graphs, Inductor's generated
    code and a digest of the results' bytes. With ``backward``, floating
    inputs require grad and each step runs the backward too (its code is
    compared as well). Run it in a fresh interpreter per side."""
    import torch
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.utils import run_and_get_code

    from rfc_shared.conformance.corpus import CORPUS, digests

    torch.manual_seed(0)
    report = {}
    for case in CORPUS:
        if case.device_index:
            continue  # needs a second device; cpu has one
        graphs: list[str] = []

        def backend(gm, example_inputs, graphs=graphs):
            graphs.append(gm.code)
            return compile_fx(gm, example_inputs)

        torch._dynamo.reset()
        compiled = torch.compile(case.build(), backend=backend, dynamic=case.dynamic or None)
        results: list[str] = []
        codes: list[str] = []
        for args in case.inputs():
            if backward:
                args = tuple(a.requires_grad_() if a.is_floating_point() else a for a in args)

            def step(compiled=compiled, args=args):
                out = compiled(*args)
                if not backward:
                    return out
                outs = out if isinstance(out, (tuple, list)) else [out]
                grads = [o.float().sum() for o in outs if o.requires_grad]
                if grads:
                    sum(grads).backward()
                return outs

            out, code = run_and_get_code(step)
            results += digests(out)
            codes += code
        report[case.name] = {"fx": graphs, "inductor": codes, "results": results}
    return report
