"""The benchmark cases. Each side is a snippet that prints one number: the
seconds one unit of work took, as the case defines the unit."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Side:
    label: str
    code: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    a: Side
    b: Side
    goal: str  # how median(A) / median(B) should compare, e.g. "<= 1.5"
    unit: str = "s"


def _per_call(setup: str, statement: str, number: int = 200_000) -> str:
    return f"""
import timeit
{setup}
best = min(timeit.repeat({statement!r}, globals=globals(), number={number}, repeat=5))
print(best / {number})
"""


IS_GPU = _per_call(
    "import torch\nfrom torch._inductor.utils import is_gpu\n"
    "names = ('cuda', 'cpu', 'mps', 'xpu', 'meta', None)\n"
    "[is_gpu(n) for n in names]",
    "for n in names: is_gpu(n)",
)

CASES: dict[str, Case] = {
    case.name: case
    for case in (
        Case(
            "is_gpu",
            "is_gpu() per call over six device names: registry-derived (rfc1) vs the stock "
            "list membership",
            Side("rfc1", IS_GPU, {"TORCH_RFC_SLICES": "rfc1"}),
            Side("stock", IS_GPU, {"TORCH_RFC_SLICES": "none"}),
            goal="<= 1.5",
        ),
    )
}
