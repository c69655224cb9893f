"""Conformance probes of slice ``rfc2``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import torch

from rfc_shared.conformance.harness import (
    ProbeFailure,
    ask_each,
    base_interface,
    check,
    isolated,
    register,
    require,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


def _in_graph_classes() -> set[type]:
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    return set(UserDefinedClassVariable._in_graph_classes())


@probe("rfc2.stream_event_classes", "the backend's Stream and Event are in-graph classes")
def _stream_event_classes() -> str:
    _in_graph_classes()  # filled before the backend registers
    interface = base_interface()
    answers = ask_each(
        lambda: {interface.Stream, interface.Event} <= _in_graph_classes(), late=interface
    )
    check(answers["late"], f"{interface.Stream.__name__}/{interface.Event.__name__} not in-graph")
    return "Stream and Event of the registered interface are in-graph classes"


@probe("rfc2.tensor_classes", "dtype tensor classes of the backend are in-graph classes")
def _tensor_classes() -> str:
    marker = type("FloatTensor", (), {"__module__": __name__})  # named as its CPU class
    answers = ask_each(
        lambda: marker in _in_graph_classes(), declared=variant(dynamo_tensor_classes=(marker,))
    )
    check(answers["declared"], "a class in the interface's dynamo_tensor_classes is not in-graph")
    return "dynamo_tensor_classes are in-graph classes"


def _traced(fn: Callable[..., torch.Tensor], what: str) -> list[torch.fx.GraphModule]:
    try:
        from rfc_shared.testing.dynamo_programs import fullgraph_graphs

        return fullgraph_graphs(fn, torch.ones(2, device=subject().device))
    except Exception as e:
        message = str(e).strip().splitlines()[0][:160]
        raise ProbeFailure(f"{what}: {type(e).__name__}: {message}") from e


@probe("rfc2.stream_tracing", "streams and events trace without graph breaks")
def _stream_tracing() -> str:
    module = subject().module

    def fn(x: torch.Tensor) -> torch.Tensor:
        stream = module.current_stream()
        event = module.Event()
        event.record(stream)
        return x + 1

    with isolated():
        register(base_interface())
        _traced(fn, f"torch.{subject().name}.current_stream/Event under fullgraph")
    return "current_stream(), Event() and record() trace in one graph"


@probe("rfc2.trace_rules", "runtime functions trace; register_device_trace_rules adds rules")
def _trace_rules() -> str:
    trace_rules = importlib.import_module("torch._dynamo.trace_rules")
    require(trace_rules, "register_device_trace_rules", "torch._dynamo.trace_rules")
    from torch._dynamo.variables import SkipFunctionVariable

    module = subject().module

    def fn(x: torch.Tensor) -> torch.Tensor:
        module.synchronize()
        return x + 1

    with isolated():
        register(base_interface())
        _traced(fn, f"torch.{subject().name}.synchronize under fullgraph")
        trace_rules.register_device_trace_rules({module.memory_allocated: SkipFunctionVariable})
        rule = trace_rules.lookup(module.memory_allocated)
    check(rule is SkipFunctionVariable, f"registered Skip, lookup says {rule}")
    return "synchronize() traces; a registered rule is what lookup() answers"


@probe("rfc2.constant_fold", "the interface's constant-fold functions fold")
def _constant_fold() -> str:
    module = subject().module

    def fn(x: torch.Tensor) -> torch.Tensor:
        return x + module.current_device() + int(module.is_available())

    declared = variant(
        dynamo_constant_fold_fns=(module.is_available,),
        dynamo_constant_fold_fns_need_guards=(module.current_device,),
    )
    with isolated():
        register(declared)
        graphs = _traced(fn, "current_device()/is_available() under fullgraph")
    calls = [
        n.target
        for g in graphs
        for n in g.graph.nodes
        if n.op == "call_function" and n.target in (module.current_device, module.is_available)
    ]
    check(not calls, f"left in the graph: {calls}")
    return "current_device() and is_available() are folded into constants"


@probe("rfc2.constant_types", "the backend's device-properties type is a constant type")
def _constant_types() -> str:
    from torch._dynamo import utils as dynamo_utils

    props = type(base_interface().get_device_properties(subject().device))
    with isolated():
        register(base_interface())
        types = dynamo_utils.common_constant_types
        known = props in (types() if callable(types) else types)
    check(known, f"{props.__qualname__} is not among Dynamo's constant types")
    return f"{props.__qualname__} is a constant type"
