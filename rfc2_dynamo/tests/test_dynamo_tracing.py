"""rfc2 on acc: streams, events, runtime calls and tensor classes trace in one
graph, with no registration beyond acc's DeviceInterface."""

from __future__ import annotations

import os

import pytest
import torch

import torch_acc  # noqa: F401  (the programs are written against torch.acc)
from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.dynamo_programs import (
    fullgraph_graphs,
    programs,
    report_in_fresh_interpreter,
)


PROGRAMS = programs(torch.acc)

# Programs stock torch 2.15 already traces in one graph once acc's interface
# is registered: it puts every registered interface's Stream and Event among
# Dynamo's in-graph classes.
UPSTREAM = {"events"}


pytestmark = pytest.mark.slice("rfc2")


@pytest.fixture
def x(privateuse1_backend: str) -> torch.Tensor:
    from torch_acc.registration import ensure_device_interface

    ensure_device_interface()
    return torch.ones(4, device="acc")


def calls_in(graphs: list[torch.fx.GraphModule], *targets: object) -> list[object]:
    return [
        node.target
        for gm in graphs
        for node in gm.graph.nodes
        if node.op == "call_function" and node.target in targets
    ]


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - UPSTREAM))
def test_program_compiles_in_one_graph_and_matches_eager(name: str, x: torch.Tensor) -> None:
    fn = PROGRAMS[name]
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), fn(x))


def test_graph_breaks_stock_vs_slice() -> None:
    """Side by side, each in a fresh interpreter with acc's interface
    registered: stock torch breaks the graph in every program but the ones
    upstream already handles; the slice in none."""
    stock = report_in_fresh_interpreter("none")
    sliced = report_in_fresh_interpreter(os.environ.get("TORCH_RFC_SLICES", "all"))
    for name in PROGRAMS:
        assert sliced[name] == {"graph_breaks": 0, "matches_eager": True}, name
        if name not in UPSTREAM:
            assert stock[name]["graph_breaks"] > 0 or not stock[name]["matches_eager"], name


def test_current_device_is_folded_and_guarded(x: torch.Tensor) -> None:
    from torch._dynamo.testing import CompileCounter

    fn = PROGRAMS["current_device"]
    counter = CompileCounter()
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=counter, fullgraph=True)
    assert compiled(x).tolist() == [1.0] * 4
    assert compiled(x).tolist() == [1.0] * 4 and counter.frame_count == 1
    torch.acc.set_device(1)
    try:
        assert compiled(x).tolist() == [2.0] * 4  # the guard failed: recompiled
    finally:
        torch.acc.set_device(0)
    assert counter.frame_count == 2
    assert not calls_in(fullgraph_graphs(fn, x), torch.acc.current_device)


def test_device_properties_fold_to_constants_on_first_trace(x: torch.Tensor) -> None:
    from torch._dynamo.utils import common_constant_types

    properties_type = type(torch.acc.get_device_properties())
    common_constant_types.discard(properties_type)
    register(variant())  # registering reads no device properties
    assert properties_type not in common_constant_types
    graphs = fullgraph_graphs(PROGRAMS["device_properties"], x)
    assert not calls_in(graphs, torch.acc.get_device_properties)
    assert properties_type in common_constant_types


def test_registration_never_reads_device_properties(x: torch.Tensor) -> None:
    def unreadable(device: object = None) -> object:
        raise RuntimeError("device lost")

    register(variant(get_device_properties=unreadable))  # no error, no warning
    assert fullgraph_graphs(PROGRAMS["current_device"], x)
    with pytest.raises(RuntimeError, match="device lost"):
        fullgraph_graphs(lambda t: t + unreadable().multi_processor_count, x)


def test_tensor_classes_are_answered_by_device_and_dtype(x: torch.Tensor) -> None:
    def fn(t: torch.Tensor) -> torch.Tensor:
        if isinstance(t, torch.acc.FloatTensor):
            return t + 1
        if isinstance(t, torch.acc.HalfTensor):
            return t + 2
        return t - 1

    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    for t in (x, x.half(), x.cpu(), x.double()):
        torch.testing.assert_close(compiled(t), fn(t))
    assert compiled(x).tolist() == [2.0] * 4


def backend_runtime_query() -> int:
    return 3


def test_register_device_trace_rules(x: torch.Tensor) -> None:
    from torch._dynamo.trace_rules import DeviceTraceRule, register_device_trace_rules

    def fn(t: torch.Tensor) -> torch.Tensor:
        return t + backend_runtime_query()

    assert fullgraph_graphs(fn, x)  # traced into: a plain Python function
    register_device_trace_rules({backend_runtime_query: DeviceTraceRule.GRAPH_BREAK})
    register_device_trace_rules({backend_runtime_query: DeviceTraceRule.GRAPH_BREAK})  # no-op
    with pytest.raises(torch._dynamo.exc.Unsupported):
        fullgraph_graphs(fn, x)


def test_register_device_trace_rules_rejects_bad_rules_and_changes_nothing(
    x: torch.Tensor,
) -> None:
    from torch._dynamo import trace_rules
    from torch._dynamo.trace_rules import DeviceTraceRule
    from torch._dynamo.variables import SkipFunctionVariable, TorchInGraphFunctionVariable

    before = dict(trace_rules._registered_device_trace_rules)
    for rules, error, match in [
        ({torch.cuda.current_device: DeviceTraceRule.GRAPH_BREAK}, ValueError, "PyTorch's own"),
        ({backend_runtime_query: SkipFunctionVariable}, TypeError, "DeviceTraceRule member"),
        (
            {
                backend_runtime_query: DeviceTraceRule.GRAPH_BREAK,
                "synchronize": DeviceTraceRule.GRAPH_BREAK,
            },
            TypeError,
            "not a hashable callable",
        ),
        ([(backend_runtime_query, DeviceTraceRule.IN_GRAPH)], TypeError, "must map"),
    ]:
        with pytest.raises(error, match=match):
            trace_rules.register_device_trace_rules(rules)
        assert trace_rules._registered_device_trace_rules == before
    assert trace_rules.lookup(torch.cuda.current_device) is TorchInGraphFunctionVariable


def test_a_function_listed_to_fold_needs_nothing_else(x: torch.Tensor) -> None:
    """acc's C binding behind current_device(), listed on its own: folded, not
    "marked as skipped"."""
    from torch_acc import _C

    def fn(t: torch.Tensor) -> torch.Tensor:
        return t + _C._get_device()

    register(variant(dynamo_constant_fold_fns_need_guards=(_C._get_device,)))
    assert not calls_in(fullgraph_graphs(fn, x), _C._get_device)
    torch.testing.assert_close(torch.compile(fn, backend="eager", fullgraph=True)(x), fn(x))


@pytest.mark.parametrize(
    ("slot", "value", "match"),
    [
        ("dynamo_constant_fold_fns", "is_available", "must be a tuple"),
        ("dynamo_constant_fold_fns", (3,), "must hold hashable functions"),
        ("dynamo_constant_fold_fns_need_guards", None, "must be a tuple"),
    ],
)
def test_a_malformed_slot_is_refused_at_registration(
    slot: str, value: object, match: str, x: torch.Tensor
) -> None:
    from torch._dynamo import device_interface

    before = dict(device_interface.device_interfaces)
    with pytest.raises(TypeError, match=f"{slot} {match}"):
        device_interface.register_interface_for_device_PrivateUse1("acc", variant(**{slot: value}))
    assert device_interface.device_interfaces == before
