"""rfc2 on acc: streams, events, runtime calls and tensor classes trace in one
graph, with no registration beyond acc's DeviceInterface."""

from __future__ import annotations

import collections
import dataclasses
import os
import types
from collections.abc import Callable

import pytest
import torch

import torch_acc  # noqa: F401  (the programs are written against torch.acc)
from rfc_shared.conformance.dynamo_programs import fullgraph_graphs, programs
from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.helpers import dynamo_report_in_fresh_interpreter


PROGRAMS = programs(torch.acc)

# Programs stock torch 2.15 already traces in one graph once acc's interface
# is registered: it puts every registered interface's Stream and Event among
# Dynamo's in-graph classes.
UPSTREAM = {"events"}


pytestmark = pytest.mark.slice("rfc2")


@pytest.fixture(autouse=True)
def _trace_rules_match_the_registry() -> None:
    """The testing kit restores the registry in place after each test, behind
    the registration functions; Dynamo's table of out-of-tree trace rules
    follows registrations, so bring it in line with the registry this test
    starts from."""
    from torch._dynamo import device_interface

    clear = getattr(device_interface, "_clear_registry_caches", None)
    if clear is not None:  # absent on stock torch
        clear()


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
    stock = dynamo_report_in_fresh_interpreter("none")
    sliced = dynamo_report_in_fresh_interpreter(os.environ.get("TORCH_RFC_SLICES", "all"))
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


def test_device_properties_fold_to_constants(x: torch.Tensor) -> None:
    """Folded on the first trace, without their class joining Dynamo's
    constant types: nothing global changes while tracing."""
    from torch._dynamo.utils import common_constant_types

    constant_types = set(common_constant_types)
    register(variant())  # registering reads no device properties
    graphs = fullgraph_graphs(PROGRAMS["device_properties"], x)
    assert not calls_in(graphs, torch.acc.get_device_properties)
    assert common_constant_types == constant_types


class _PlainProperties:
    """Like torch.cuda's _CudaDeviceProperties: a class of the backend's own."""

    def __init__(self, multi_processor_count: int) -> None:
        self.multi_processor_count = multi_processor_count


_NamedTupleProperties = collections.namedtuple("_NamedTupleProperties", "multi_processor_count")


@dataclasses.dataclass
class _DataclassProperties:
    multi_processor_count: int


@pytest.mark.parametrize(
    "make",
    [_PlainProperties, _NamedTupleProperties, _DataclassProperties, types.SimpleNamespace],
    ids=["class", "namedtuple", "dataclass", "namespace"],
)
def test_device_properties_of_any_class_fold(
    make: Callable[..., object], x: torch.Tensor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever torch.acc.get_device_properties() returns, a compiled read of
    it gives eager's result in one graph (the namedtuple used to be an
    internal error: KeyError in ``BaseListVariable.cls_for``)."""
    properties = make(multi_processor_count=5)

    def get_device_properties(device: object = None) -> object:
        os.getpid()  # a C binding, as a backend's query of its runtime is
        return properties

    monkeypatch.setattr(torch.acc, "get_device_properties", get_device_properties)
    # acc lists its properties function to fold; this one replaces it.
    register(
        variant(
            get_device_properties=get_device_properties,
            dynamo_constant_fold_fns=(torch.acc.is_available, get_device_properties),
        )
    )
    fn = PROGRAMS["device_properties"]
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(fn, backend="eager")(x), x + 5)
    assert not calls_in(fullgraph_graphs(fn, x), get_device_properties)


def test_a_method_left_out_of_dynamo_traced_methods_is_traced_as_a_plain_function(
    x: torch.Tensor,
) -> None:
    """acc without synchronize among the methods it names: Dynamo inlines
    torch.acc.synchronize() as any Python function (which calls
    torch.accelerator.synchronize()) instead of treating it as
    torch.cuda.synchronize(); the other methods keep theirs."""
    from torch._dynamo import trace_rules
    from torch._dynamo.device_interface import _DYNAMO_TRACED_METHODS
    from torch._dynamo.variables import TorchInGraphFunctionVariable, UserFunctionVariable

    assert trace_rules.lookup(torch.acc.synchronize) is TorchInGraphFunctionVariable
    # Every method but synchronize, and but the three acc lists to fold (a
    # function takes one rule).
    folded = {"synchronize", "current_device", "is_available", "get_device_properties"}
    register(
        variant(dynamo_traced_methods=tuple(m for m in _DYNAMO_TRACED_METHODS if m not in folded))
    )
    assert trace_rules._get_device_trace_rule(torch.acc.synchronize) is None
    assert trace_rules.lookup(torch.acc.synchronize) is UserFunctionVariable
    assert trace_rules.lookup(torch.acc.current_stream) is TorchInGraphFunctionVariable
    fn = PROGRAMS["synchronize"]
    torch.testing.assert_close(torch.compile(fn, backend="eager", fullgraph=True)(x), fn(x))


def test_an_interface_that_names_no_method_is_traced_as_on_stock(x: torch.Tensor) -> None:
    """dynamo_traced_methods is opt-in: an interface that binds torch.acc's
    functions but names none of them (None, the default) gives them no rule
    and no handler; what it lists to fold is still folded."""
    from torch._dynamo import trace_rules

    register(variant(dynamo_traced_methods=None))
    for fn in (torch.acc.synchronize, torch.acc.current_stream, torch.acc.set_device):
        assert trace_rules._get_device_trace_rule(fn) is None, fn
        assert trace_rules._get_device_interface_method(fn) is None, fn
    assert not calls_in(fullgraph_graphs(PROGRAMS["current_device"], x), torch.acc.current_device)


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
