"""rfc2 on acc: streams, events, runtime calls and tensor classes trace in one
graph, with no registration beyond acc's DeviceInterface."""

from __future__ import annotations

import warnings

import pytest
import torch

import torch_acc  # noqa: F401  (the programs are written against torch.acc)
from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.dynamo_programs import (
    compile_and_count,
    fullgraph_graphs,
    programs,
    report_in_fresh_interpreter,
)


PROGRAMS = programs(torch.acc)


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


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_compiles_in_one_graph_and_matches_eager(name: str, x: torch.Tensor) -> None:
    fn = PROGRAMS[name]
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), fn(x))


def test_graph_breaks_stock_vs_slice(x: torch.Tensor) -> None:
    """Side by side: the same programs on stock torch (a subprocess with the
    overlay off) break the graph or go wrong; with the slice none does."""
    stock = report_in_fresh_interpreter("none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sliced = {name: compile_and_count(fn, x) for name, fn in PROGRAMS.items()}
    for name in PROGRAMS:
        assert stock[name]["graph_breaks"] > 0 or not stock[name]["matches_eager"], name
        assert sliced[name].graph_breaks == 0 and sliced[name].matches_eager, name


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


def test_device_properties_fold_to_constants(x: torch.Tensor) -> None:
    graphs = fullgraph_graphs(PROGRAMS["device_properties"], x)
    assert not calls_in(graphs, torch.acc.get_device_properties)
    from torch._dynamo.utils import common_constant_types

    assert type(torch.acc.get_device_properties()) in common_constant_types


def test_stream_and_event_classes_registered_late_are_in_graph(x: torch.Tensor) -> None:
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    register(variant(Stream=torch.Stream, Event=torch.Event))
    assert torch.acc.Stream not in UserDefinedClassVariable._in_graph_classes()
    register(variant())  # acc's own classes; the cached set is rebuilt
    assert {torch.acc.Stream, torch.acc.Event} <= UserDefinedClassVariable._in_graph_classes()


def test_tensor_classes_come_from_the_interface_slot(x: torch.Tensor) -> None:
    fn = PROGRAMS["tensor_class"]
    register(variant(dynamo_tensor_classes=()))
    assert torch.compile(fn, backend="eager")(x).tolist() == [0.0] * 4  # wrong: not declared
    register(variant())
    torch._dynamo.reset()
    assert torch.compile(fn, backend="eager")(x).tolist() == [2.0] * 4
    half = torch.ones(4, device="acc", dtype=torch.half)
    assert torch.compile(fn, backend="eager")(half).tolist() == [0.0] * 4


def backend_runtime_query() -> int:
    return 3


def test_register_device_trace_rules(x: torch.Tensor) -> None:
    from torch._dynamo.trace_rules import register_device_trace_rules
    from torch._dynamo.variables import SkipFunctionVariable

    def fn(t: torch.Tensor) -> torch.Tensor:
        return t + backend_runtime_query()

    assert fullgraph_graphs(fn, x)  # traced into: a plain Python function
    register_device_trace_rules({backend_runtime_query: SkipFunctionVariable})
    register_device_trace_rules({backend_runtime_query: SkipFunctionVariable})  # same: no-op
    with pytest.raises(torch._dynamo.exc.Unsupported):
        fullgraph_graphs(fn, x)


def test_register_device_trace_rules_rejects_bad_rules_and_changes_nothing(
    x: torch.Tensor,
) -> None:
    from torch._dynamo import trace_rules
    from torch._dynamo.variables import SkipFunctionVariable, UserFunctionVariable

    before = dict(trace_rules._registered_device_trace_rules)
    for rules, error, match in [
        ({torch.cuda.synchronize: SkipFunctionVariable}, ValueError, "already has the rule"),
        ({backend_runtime_query: UserFunctionVariable}, TypeError, "must be one of"),
        (
            {backend_runtime_query: SkipFunctionVariable, "synchronize": SkipFunctionVariable},
            TypeError,
            "is not callable",
        ),
        ([(backend_runtime_query, SkipFunctionVariable)], TypeError, "must be a dict"),
    ]:
        with pytest.raises(error, match=match):
            trace_rules.register_device_trace_rules(rules)
        assert trace_rules._registered_device_trace_rules == before
    assert trace_rules.lookup(torch.cuda.synchronize) is not SkipFunctionVariable


@pytest.mark.parametrize(
    ("slot", "value", "match"),
    [
        ("dynamo_tensor_classes", (torch.Tensor,), "named after a CPU tensor class"),
        ("dynamo_tensor_classes", "FloatTensor", "must be a tuple"),
        ("dynamo_constant_fold_fns", (3,), "takes functions"),
        ("dynamo_constant_fold_fns_need_guards", None, "must be a tuple"),
    ],
)
def test_a_malformed_slot_is_refused_at_registration(
    slot: str, value: object, match: str, x: torch.Tensor
) -> None:
    from torch._dynamo import device_interface

    before = dict(device_interface.device_interfaces)
    with pytest.raises(TypeError, match=f"{slot} .*{match}|{slot} {match}"):
        device_interface.register_interface_for_device_PrivateUse1("acc", variant(**{slot: value}))
    assert device_interface.device_interfaces == before


def test_unreadable_device_properties_warn_and_stay_out_of_constants(
    x: torch.Tensor,
) -> None:
    from torch._dynamo import utils

    def broken(device: object = None) -> object:
        raise RuntimeError("device lost")

    utils.common_constant_types.discard(type(torch.acc.get_device_properties()))
    with pytest.warns(UserWarning, match=r"get_device_properties\(\) raised .*device lost"):
        register(variant(get_device_properties=broken))
    assert type(torch.acc.get_device_properties()) not in utils.common_constant_types
    register(variant())
    assert type(torch.acc.get_device_properties()) in utils.common_constant_types
