"""Conformance probes of slice ``rfc1``."""

from __future__ import annotations

import importlib
import inspect

import torch

from rfc_shared.conformance.harness import (
    ProbeFailure,
    ask_each,
    base_interface,
    check,
    check_follows,
    device_property_stand_ins,
    registry,
    stream_class,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


# What the two variants of the is_gpu probes say.
_GPU_OR_NOT = {"gpu": "is_gpu() is True", "not_gpu": "is_gpu() is False"}


def _utils():
    return importlib.import_module("torch._inductor.utils")


@probe("rfc1.is_gpu", "is_gpu(device) asks the interface")
def _is_gpu() -> str:
    name = subject().name
    answers = ask_each(
        lambda: _utils().is_gpu(name),
        gpu=variant(is_gpu=lambda: True),
        not_gpu=variant(is_gpu=lambda: False),
    )
    check_follows(f"is_gpu({name!r})", answers, {"gpu": True, "not_gpu": False}, _GPU_OR_NOT)
    return f"is_gpu({name!r}) follows the interface: {answers}"


@probe("rfc1.gpu_types", "GPU_TYPES is derived from the registry, late binding")
def _gpu_types() -> str:
    name = subject().name
    utils = _utils()  # imported before the backend registers
    answers = ask_each(
        lambda: name in list(utils.GPU_TYPES),
        gpu=variant(is_gpu=lambda: True),
        not_gpu=variant(is_gpu=lambda: False),
    )
    check_follows(f"{name!r} in GPU_TYPES", answers, {"gpu": True, "not_gpu": False}, _GPU_OR_NOT)
    return f"{name!r} in GPU_TYPES follows the interface, registered after import: {answers}"


@probe("rfc1.get_gpu_type", "get_gpu_type() returns the PrivateUse1 GPU")
def _get_gpu_type() -> str:
    name = subject().name
    answers = ask_each(lambda: _utils().get_gpu_type(), gpu=variant(is_gpu=lambda: True))
    check(answers["gpu"] == name, f"get_gpu_type() is {answers['gpu']!r} with a GPU-class {name}")
    return f"get_gpu_type() is {name!r}"


@probe("rfc1.has_triton", "has_triton() walks is_triton_capable of registered interfaces")
def _has_triton() -> str:
    from torch.utils._triton import has_triton, has_triton_package

    check(has_triton_package(), "the triton package is not installed")
    answers = ask_each(
        has_triton,
        capable=variant(is_triton_capable=lambda device=None: True),
        incapable=variant(is_triton_capable=lambda device=None: False),
    )
    check(
        answers["capable"] is True, f"has_triton() is {answers['capable']} with a capable backend"
    )
    check(
        answers["incapable"] is False or torch.cuda.is_available(),
        f"has_triton() stayed {answers['incapable']} after the backend said it is not capable",
    )
    return f"has_triton() follows is_triton_capable: {answers}"


@probe("rfc1.device_need_guard", "device_need_guard = is_gpu and exposes streams")
def _device_need_guard() -> str:
    name = subject().name
    base = registry().DeviceInterface
    # A backend without streams is given a stand-in Stream for the first case.
    answers = ask_each(
        lambda: _utils().device_need_guard(name),
        streams=variant(is_gpu=lambda: True, Stream=stream_class()),
        no_streams=variant(is_gpu=lambda: True, Stream=base.Stream),
    )
    check_follows(
        f"device_need_guard({name!r})",
        answers,
        {"streams": True, "no_streams": False},
        {"streams": "it is a GPU with a Stream class", "no_streams": "it is a GPU without one"},
    )
    return f"device_need_guard({name!r}) follows the Stream slot: {answers}"


@probe(
    "rfc1.multi_processor_count",
    "DeviceProperties uses get_multi_processor_count",
    landed_in="2.15.0",
)
def _multi_processor_count() -> str:
    from torch._inductor.runtime.hints import DeviceProperties

    # A backend without device properties is given stand-ins: the site is the
    # multi-processor count, not the properties (see rfc1.host_device_properties).
    answers = ask_each(
        lambda: DeviceProperties.create(subject().device).multi_processor_count,
        custom=variant(
            get_multi_processor_count=classmethod(lambda cls, device=None: 7),
            **device_property_stand_ins(),
        ),
    )
    check(
        answers["custom"] == 7,
        f"multi_processor_count is {answers['custom']}, the interface says 7",
    )
    return "DeviceProperties.multi_processor_count comes from the interface"


@probe(
    "rfc1.host_device_properties",
    "a host device without device properties gets the host's DeviceProperties",
)
def _host_device_properties() -> str:
    from torch._inductor.runtime.hints import DeviceProperties

    base = registry().DeviceInterface
    device = torch.device(subject().name, 0)
    # A host-class interface that has no device properties, as OpenReg's: the
    # backend's members the registry requires, on DeviceInterface itself, so
    # that nothing defines get_device_properties() (a variant of the backend's
    # interface would inherit the backend's).
    required = ("is_available", "device_count", "current_device", "set_device")
    without = type(
        "HostWithoutProperties",
        (base,),
        {
            "__module__": __name__,
            "is_gpu": staticmethod(lambda: False),
            **{name: inspect.getattr_static(base_interface(), name) for name in required},
        },
    )
    try:
        answers = ask_each(lambda: DeviceProperties.create(device), host=without)
    except NotImplementedError as e:
        raise ProbeFailure(
            f"DeviceProperties.create({str(device)!r}) raises NotImplementedError for a host "
            "device without device properties: this torch asks every device's interface for "
            "them instead of taking the host's"
        ) from e
    props = answers["host"]
    cpu = DeviceProperties.create(torch.device("cpu"))
    check(
        (props.type, props.index) == (device.type, 0)
        and props.multi_processor_count == cpu.multi_processor_count,
        f"DeviceProperties.create({str(device)!r}) is {props}",
    )
    return (
        f"{device.type} without device properties gets the host's: "
        f"{props.multi_processor_count} compute units"
    )
