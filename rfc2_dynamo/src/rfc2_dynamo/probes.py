"""Conformance probes of slice ``rfc2``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import torch

from rfc_shared.conformance.harness import (
    ProbeFailure,
    base_interface,
    check,
    isolated,
    register,
    runtime,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


def _traced(fn: Callable[..., torch.Tensor], what: str) -> list[torch.fx.GraphModule]:
    try:
        from rfc_shared.conformance.dynamo_programs import fullgraph_graphs

        return fullgraph_graphs(fn, torch.ones(2, device=subject().device))
    except Exception as e:
        message = str(e).strip().splitlines()[0][:160]
        if "marked as skipped" in message:
            # Dynamo's words for a function it has no rule to trace into.
            raise ProbeFailure(
                f"{what}: Dynamo does not trace the backend's runtime function (it has no trace "
                "rule for it and breaks the graph there); the rfc2 slice lets the interface "
                "declare its functions"
            ) from e
        raise ProbeFailure(f"{what}: {type(e).__name__}: {message}") from e


@probe("rfc2.tensor_classes", "isinstance() against the backend's dtype tensor classes traces")
def _tensor_classes() -> str:
    float_class = runtime("FloatTensor")

    def fn(x: torch.Tensor) -> torch.Tensor:
        return x + 1 if isinstance(x, float_class) else x - 1

    with isolated():
        register(base_interface())
        graphs = _traced(fn, f"isinstance(x, torch.{subject().name}.FloatTensor) under fullgraph")
        answers = {
            str(dtype): torch.compile(fn, backend="eager", fullgraph=True)(
                torch.zeros(1, device=subject().device, dtype=dtype)
            ).item()
            for dtype in (torch.float32, torch.float16)
        }
    check(graphs and answers == {"torch.float32": 1.0, "torch.float16": -1.0}, f"{answers}")
    return "isinstance() is answered from the tensor's device and dtype, in one graph"


@probe("rfc2.stream_tracing", "streams and events trace without graph breaks")
def _stream_tracing() -> str:
    current_stream, event_class = runtime("current_stream"), runtime("Event")

    def fn(x: torch.Tensor) -> torch.Tensor:
        stream = current_stream()
        event = event_class()
        event.record(stream)
        return x + 1

    with isolated():
        register(base_interface())
        _traced(fn, f"torch.{subject().name}.current_stream/Event under fullgraph")
    return "current_stream(), Event() and record() trace in one graph"


@probe("rfc2.trace_rules", "the runtime functions the interface names trace like torch.cuda's")
def _trace_rules() -> str:
    device_interface = importlib.import_module("torch._dynamo.device_interface")
    check(
        hasattr(device_interface.DeviceInterface, "dynamo_traced_methods"),
        "torch._dynamo.device_interface.DeviceInterface.dynamo_traced_methods does not exist",
    )
    module = subject().module
    synchronize = getattr(module, "synchronize", None)
    bound = {"current_device": module.current_device}
    if synchronize is not None:
        bound["synchronize"] = synchronize

    def fn(x: torch.Tensor) -> torch.Tensor:
        if synchronize is not None:
            synchronize()
        return x + module.current_device()

    # The interface names the methods whose function behaves like torch.cuda's
    # (opt-in: an interface that names none is traced as on stock torch).
    with isolated():
        # Named, not listed to fold: a function takes one rule.
        register(
            variant(
                **bound,
                dynamo_traced_methods=tuple(bound),
                dynamo_constant_fold_fns_need_guards=(),
            )
        )
        graphs = _traced(fn, f"torch.{subject().name}.{'/'.join(bound)} under fullgraph")
    left = [
        n.target
        for g in graphs
        for n in g.graph.nodes
        if n.op == "call_function" and n.target is module.current_device
    ]
    check(not left, "current_device() was left in the graph instead of folded")
    traced = ", ".join(f"{name}()" for name in bound)
    return f"{traced} trace in one graph once the interface names them"


@probe("rfc2.constant_fold", "the interface's constant-fold functions fold")
def _constant_fold() -> str:
    module = subject().module

    def fn(x: torch.Tensor) -> torch.Tensor:
        return x + module.current_device() + int(module.is_available())

    # Listed to fold, not named among the traced methods: a function takes
    # one rule.
    declared = variant(
        dynamo_constant_fold_fns=(module.is_available,),
        dynamo_constant_fold_fns_need_guards=(module.current_device,),
        dynamo_traced_methods=None,
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


@probe("rfc2.constant_types", "the backend's device properties fold into a constant")
def _constant_types() -> str:
    from torch._dynamo import utils as dynamo_utils

    get_device_properties = runtime("get_device_properties")
    props = type(get_device_properties(subject().device))

    def fn(x: torch.Tensor) -> torch.Tensor:
        return x + get_device_properties().multi_processor_count

    constant_types = set(dynamo_utils.common_constant_types)
    with isolated():
        register(base_interface())
        graphs = _traced(fn, f"torch.{subject().name}.get_device_properties() under fullgraph")
    calls = [
        n.target
        for g in graphs
        for n in g.graph.nodes
        if n.op == "call_function" and n.target is get_device_properties
    ]
    check(not calls, "get_device_properties() is left in the graph")
    # The 2.15.0 series folds the object where it is folded; the backports make
    # its class a constant type on the first trace.
    how = (
        "no constant type added"
        if dynamo_utils.common_constant_types == constant_types
        else f"{props.__qualname__} made a constant type"
    )
    return f"get_device_properties() ({props.__qualname__}) folds into a constant; {how}"
