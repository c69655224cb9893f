"""The programs slice rfc2 makes traceable, and their graph-break counts.

Each program is what a user writes around the device runtime: streams, events,
synchronization, device queries, dtype tensor classes. The tests compile each
one with ``fullgraph=True``; ``python -m rfc_shared.conformance.dynamo_programs`` prints
the graph breaks Dynamo counts for each one under the slices that
``TORCH_RFC_SLICES`` selects, as one JSON object, so that stock torch and the
slice can be compared side by side.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from types import ModuleType

import torch


def programs(runtime: ModuleType) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    """The programs, written against ``runtime`` (``torch.<backend>``)."""

    def new_stream(x: torch.Tensor) -> torch.Tensor:
        s = runtime.Stream()
        with runtime.stream(s):
            y = x + 1
        return y

    def wait_stream(x: torch.Tensor) -> torch.Tensor:
        s = runtime.Stream()
        s.wait_stream(runtime.current_stream())
        return x + 1

    def current_stream(x: torch.Tensor) -> torch.Tensor:
        runtime.current_stream()
        return x + 1

    def events(x: torch.Tensor) -> torch.Tensor:
        event = runtime.Event()
        event.record()
        event.wait()
        event.query()
        return x + 1

    def synchronize(x: torch.Tensor) -> torch.Tensor:
        runtime.synchronize()
        return x + 1

    def device_properties(x: torch.Tensor) -> torch.Tensor:
        return x + runtime.get_device_properties().multi_processor_count

    def current_device(x: torch.Tensor) -> torch.Tensor:
        return x + runtime.current_device()

    def tensor_class(x: torch.Tensor) -> torch.Tensor:
        return x + 1 if isinstance(x, runtime.FloatTensor) else x - 1

    return {
        fn.__name__: fn
        for fn in (
            new_stream,
            wait_stream,
            current_stream,
            events,
            synchronize,
            device_properties,
            current_device,
            tensor_class,
        )
    }


def fullgraph_graphs(
    fn: Callable[..., torch.Tensor], *args: torch.Tensor
) -> list[torch.fx.GraphModule]:
    """The FX graphs Dynamo captures for ``fn(*args)`` with ``fullgraph=True``
    (a graph break raises)."""
    graphs: list[torch.fx.GraphModule] = []

    def capture(gm: torch.fx.GraphModule, example_inputs: object) -> Callable[..., object]:
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=capture, fullgraph=True)(*args)
    return graphs


@dataclass(frozen=True)
class Outcome:
    graph_breaks: int
    matches_eager: bool


def compile_and_count(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> Outcome:
    """Compiles ``fn`` (graph breaks allowed), runs it on ``x`` and counts the
    graph breaks Dynamo reported. A compiled program that raises does not
    match eager (stock torch 2.11 traces an out-of-tree Event's record() into
    an op that refuses the event when it runs)."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    try:
        compiled = torch.compile(fn, backend="eager")(x)
    except Exception:  # any failure is an outcome to report
        return Outcome(sum(counters["graph_break"].values()), False)
    return Outcome(sum(counters["graph_break"].values()), torch.equal(compiled, fn(x)))


def report() -> dict[str, dict[str, object]]:
    """Every program's outcome on device 0 of the backend under test.

    The backend's DeviceInterface is registered first if nothing did (stock
    torch registers it through ``register_interface_for_device()``), so that
    the outcomes on stock torch and under a slice differ only by what the
    slice adds to a registered interface.
    """
    import warnings

    from rfc_shared.conformance.harness import base_interface, register, registry

    from .backend import ensure_privateuse1_backend

    name = ensure_privateuse1_backend()
    if name not in dict(registry().get_registered_device_interfaces()):
        register(base_interface())
    x = torch.ones(4, device=name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dynamo warns once per graph break
        return {
            program: asdict(compile_and_count(fn, x))
            for program, fn in programs(getattr(torch, name)).items()
        }


def main() -> None:
    print(json.dumps(report()))


if __name__ == "__main__":
    main()
