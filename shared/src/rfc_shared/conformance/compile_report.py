"""Compile the corpus on a device and report, per case, what happened.

``python -m rfc_shared.conformance.compile_report --backend inductor`` prints one
JSON object per case: ``{"case", "status", "error", "message", "site"}``. It
runs in a fresh interpreter so that the overlay selection (TORCH_RFC_SLICES),
acc's mode (TORCH_ACC_MODE) and the registration under test apply from the
start. ``site`` is the innermost frame inside torch where the error was
raised, the place a slice has to fix.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any


def _outcome(case: str, status: str, e: BaseException) -> dict[str, Any]:
    """A case's report line for an exception: its innermost cause and where
    inside torch it was raised."""
    inner = _innermost_exception(e)
    return {
        "case": case,
        "status": status,
        "error": type(inner).__name__,
        "message": first_line(inner)[:300],
        "site": failure_site(e),
    }


def _innermost_exception(e: BaseException) -> BaseException:
    while e.__cause__ is not None:
        e = e.__cause__
    return e


def first_line(e: BaseException) -> str:
    """The first line of ``e``'s message, with the next one where the first
    only introduces it (Dynamo's "backend='inductor' raised:")."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()] or [""]
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def failure_site(e: BaseException) -> str:
    """``torch/<path>:<function>`` of the innermost torch frame, else the
    innermost frame."""
    frames = traceback.extract_tb(_innermost_exception(e).__traceback__)
    frames = frames or traceback.extract_tb(e.__traceback__)
    for frame in reversed(frames):
        parts = Path(frame.filename).parts
        if "torch" in parts:
            relative = "/".join(parts[len(parts) - parts[::-1].index("torch") - 1 :])
            return f"{relative}:{frame.name}"
    return f"{Path(frames[-1].filename).name}:{frames[-1].name}" if frames else "?"


def compile_case(
    name: str, backend: str, device: str, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Compile corpus case ``name`` for ``device`` and compare with the CPU.

    ``status`` is ``ok``, ``fail`` (compiling or running the compiled code
    failed, or it disagrees with the CPU), or ``eager-unsupported`` (the
    backend cannot run the case in eager mode, so compiling it proves
    nothing either way).
    """
    import torch

    from .corpus import CASES, assert_same, run

    case = CASES[name]
    torch._dynamo.reset()
    try:
        run(case, device)
    except Exception as e:
        return _outcome(name, "eager-unsupported", e)
    try:
        want = run(case, "cpu")
        compile_options: dict[str, Any] = {"backend": backend}
        if options:
            compile_options["options"] = options
        assert_same(case, run(case, device, compile_options), want)
    except Exception as e:
        return _outcome(name, "fail", e)
    return {"case": name, "status": "ok", "error": None, "message": "", "site": None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--device", help="device type (default: the PrivateUse1 backend's)")
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--options", type=json.loads, help="torch.compile options, as JSON")
    parser.add_argument(
        "--setup",
        metavar="MODULE:FUNCTION",
        help="call this first (e.g. a registration through PyTorch's public extension points)",
    )
    args = parser.parse_args(argv)

    import torch  # noqa: F401

    from .backend import ensure_privateuse1_backend
    from .corpus import CASES

    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: Triton's interpreter
    device = args.device or ensure_privateuse1_backend()
    if args.setup:
        module, _, function = args.setup.partition(":")
        getattr(importlib.import_module(module), function)()
    names = args.cases.split(",") if args.cases else list(CASES)
    for name in names:
        result = compile_case(name, args.backend, device, args.options)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
