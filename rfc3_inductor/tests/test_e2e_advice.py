"""What ``rfc3.e2e_compile`` says of a corpus case the backend cannot run in
eager mode: a missing eager convolution points at the backend guide's section
on convolutions, which exists."""

from __future__ import annotations

from pathlib import Path


def _eager_gap(*args, **kwargs):
    # Imported when a test runs: --control (stock torch) collects this file
    # without running it, and then nothing has imported the installed slice,
    # so pytest's importlib mode would take this folder for the package.
    from rfc3_inductor import probes

    return probes._eager_gap(*args, **kwargs)


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "backend-guide.md"


def test_a_missing_eager_convolution_points_at_the_guide() -> None:
    gap = _eager_gap(
        {
            "error": "NotImplementedError",
            "message": "convolution_overrideable not implemented. You are likely triggering "
            "this with tensor backend other than CPU/CUDA/MKLDNN, ...",
        }
    )
    assert gap.endswith("(backend guide, section 1, Convolutions)")
    section_1 = GUIDE.read_text(encoding="utf-8").split("\n## 1. ")[1].split("\n## 2. ")[0]
    assert "**Convolutions need kernels of the device's own.**" in section_1


def test_another_gap_is_named_by_its_error() -> None:
    gap = _eager_gap({"error": "RuntimeError", "message": "no kernel for aten::foo"})
    assert gap == "RuntimeError: no kernel for aten::foo"
