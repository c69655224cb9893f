"""Conformance probes of slice ``graph_capture``."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import torch

from rfc_shared.conformance.harness import (
    NotApplicable,
    ask_each,
    base_interface,
    check,
    exposes_streams,
    implements,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


def _unused(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the probe records no graph")


def _applied() -> bool:
    """Whether the torch in use has the slice: stock torch asks an interface
    nothing about graphs, so the probe's variants are then the backend's own."""
    registry = importlib.import_module("torch._dynamo.device_interface")
    return hasattr(registry.DeviceInterface, "graph_capture")


def _graph_capture_stubs() -> dict[str, Any]:
    """Stand-ins for the methods an interface that declares graph capture must
    implement and the backend's does not: the gate probe never records, so
    they are never called."""
    registry = importlib.import_module("torch._dynamo.device_interface")
    required = getattr(registry, "_GRAPH_CAPTURE_INTERFACE_METHODS", ())
    return {name: _unused for name in required if not implements(base_interface(), name)}


def _declaring(declared: bool) -> type:
    """A variant of the backend's interface that declares graph capture or not."""
    if not _applied():
        return variant()
    operations = importlib.import_module("torch._dynamo.graph_capture_interface")
    feature = importlib.import_module("torch._dynamo.device_interface").BackendFeature
    base = base_interface()
    if not declared:
        return variant(
            graph_capture=lambda: None,
            backend_features=lambda device=None: (
                base.backend_features(device) - {feature.GRAPH_CAPTURE}
            ),
        )
    stand_ins = type(
        "ProbeGraphCapture",
        (operations.GraphCaptureInterface,),
        {name: staticmethod(_unused) for name in operations._REQUIRED_MEMBERS},
    )()
    return variant(
        graph_capture=lambda: stand_ins,
        backend_features=lambda device=None: (
            base.backend_features(device) | {feature.GRAPH_CAPTURE}
        ),
        **_graph_capture_stubs(),
    )


def _declares_graph_capture(interface: type) -> bool:
    return _applied() and interface.graph_capture() is not None


@probe("graph_capture.gate", 'mode="reduce-overhead" asks the interface whether to record graphs')
def _gate() -> str:
    utils = importlib.import_module("torch._inductor.cudagraph_utils")
    device = subject().device
    # The harness's answer, not DeviceInterface.exposes_streams(): stock torch
    # before 2.15 has no such method, and the probe must fail there, not crash.
    if not exposes_streams(base_interface()):
        raise NotApplicable(f"{device.type} has no streams to capture graphs on")
    node = torch.fx.Graph().placeholder("x")
    answers = ask_each(
        lambda: utils.check_multiple_devices_or_any_cpu_nodes({device: node}),
        declares=_declaring(True),
        silent=_declaring(False),
    )
    check(answers["declares"] is None, f"declaring graph capture: {answers['declares']}")
    check(answers["silent"] is not None, "a device that does not declare it is recorded")
    return f"recorded when the interface declares it; otherwise: {answers['silent']}"


@probe("graph_capture.record", "graph trees record the backend's own graphs through its interface")
def _record() -> str:
    trees = importlib.import_module("torch._inductor.cudagraph_trees")
    device = subject().device
    if not _declares_graph_capture(base_interface()):
        raise NotApplicable(f"{device.type}'s DeviceInterface does not declare graph capture")
    check(
        "device_type" in inspect.signature(trees.cudagraphify).parameters,
        "cudagraph_trees.cudagraphify() records CUDA graphs only (no device_type)",
    )

    def model(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        (x,) = inputs
        inputs.clear()
        return [x * 2 + 1]

    x = torch.arange(8.0, device=device)
    run = trees.cudagraphify_impl(
        model,
        [x],
        (0,),
        device_index=device.index,
        device_type=device.type,
        is_backward=False,
        is_inference=True,
        stack_traces=[None],
    )
    for step in range(3):  # warm up, record, replay
        torch.compiler.cudagraph_mark_step_begin()
        x.copy_(torch.arange(8.0) + step)
        (out,) = run([x])
        check(
            torch.equal(out.cpu(), (torch.arange(8.0) + step) * 2 + 1),
            f"step {step}: {out.cpu().tolist()}",
        )
    manager = trees.get_manager(device.index, False, device_type=device.type)
    recorded = [node for node in manager.get_roots() if node.graph is not None]
    check(recorded, f"no graph was recorded on {device}")
    trees.reset_cudagraph_trees()
    return f"recorded a {type(recorded[0].graph).__name__} on {device} and replayed it"
