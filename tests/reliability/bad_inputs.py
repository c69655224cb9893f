"""Every public entry point the slices add or change, with each plausible
mistake a backend author can make there.

Each row names what is called, what is wrong, and what must come back: an
exception or one warning, whose message must match. ``test_bad_inputs.py``
runs the rows against acc with every slice applied and checks that nothing
observable changed; the docs page "Reliability" shows the table with the
message each row actually produced.
"""

from __future__ import annotations

import contextlib
import logging
import re
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from rfc_shared import selection
from rfc_shared.conformance.harness import isolated, register, variant
from rfc_shared.overlay import OverlayError, PatchApplyError
from rfc_shared.overlay.base import TorchBase, installed_torch_base
from rfc_shared.overlay.slices import BaseMismatchError, SliceError


@dataclass(frozen=True)
class Mistake:
    """One row: ``act()`` makes the mistake at ``entry``; it must raise
    ``expect``, or for a Warning warn it exactly once, with a message that
    ``match`` (a regular expression) finds."""

    entry: str
    mistake: str
    act: Callable[[], object]
    expect: type[BaseException] | type[Warning]
    match: str


def _registry():
    import torch._dynamo.device_interface as device_interface

    return device_interface


def _register(interface: object, device: object = "acc") -> None:
    _registry().register_interface_for_device_PrivateUse1(device, interface)


def _register_instead_of_acc(interface: object) -> None:
    """Registers ``interface`` as acc's, where acc has none yet: the mistake is
    in the interface, not a duplicate registration. A refused interface must
    leave the registry as it found it."""
    registry = _registry()
    with isolated():
        for key in [k for k in registry.device_interfaces if k.split(":")[0] == "acc"]:
            del registry.device_interfaces[key]
        before = dict(registry.device_interfaces)
        try:
            _register(interface)
        finally:
            if registry.device_interfaces != before:
                raise AssertionError("a refused interface changed the registry")


def _raises(*args: object, **kwargs: object) -> object:
    raise RuntimeError("device lost")


def _interface(**overrides: object) -> type:
    return variant(**overrides)


def _compile_with(options: dict[str, object]) -> None:
    torch.compile(lambda t: t + 1, options=options)


def _op_overrides(device: str) -> None:
    from torch._inductor.codegen.common import get_device_op_overrides

    get_device_op_overrides(device)


class _WarningsFromLog(logging.Handler):
    """Re-emits the WARNING records of a logger as UserWarnings: torch logs
    some answers to a mistake instead of warning."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            warnings.warn(record.getMessage(), UserWarning, stacklevel=2)


@contextlib.contextmanager
def _logged_as_warnings(logger: str) -> Iterator[None]:
    handler = _WarningsFromLog()
    log = logging.getLogger(logger)
    log.addHandler(handler)
    try:
        yield
    finally:
        log.removeHandler(handler)


def _cache_system_info(info: object) -> None:
    from torch._inductor.codecache import CacheBase

    with (
        _acc_replaced_by(_interface(get_cache_system_info=classmethod(lambda cls: info))),
        _logged_as_warnings("torch._inductor.codecache"),
    ):
        CacheBase.get_system.cache_clear()
        try:
            CacheBase.get_system()
        finally:
            CacheBase.get_system.cache_clear()


@contextlib.contextmanager
def _acc_replaced_by(interface: type) -> Iterator[None]:
    """acc registered with ``interface`` for the block, then as before."""
    with isolated():
        register(interface)
        yield


def _from_device_module(hook: Callable[[], object]) -> None:
    """Runs the registry's lookup of acc's interface with ``hook`` as
    ``torch.acc.get_device_interface``, acc's registration removed."""
    registry = _registry()
    saved_hook = torch.acc.get_device_interface
    acc_entries = {k: v for k, v in registry.device_interfaces.items() if k.split(":")[0] == "acc"}
    torch.acc.get_device_interface = hook
    try:
        for key in acc_entries:
            del registry.device_interfaces[key]
        # An edit in place: the derived answers follow, and the hook is asked.
        registry._clear_registry_caches()
        registry.get_registered_device_interfaces()
    finally:
        torch.acc.get_device_interface = saved_hook
        for key in [k for k in registry.device_interfaces if k.split(":")[0] == "acc"]:
            del registry.device_interfaces[key]
        registry.device_interfaces.update(acc_entries)
        registry._clear_registry_caches()


def _raise_driver_missing() -> object:
    raise RuntimeError("driver not loaded")


def _visible_devices(value: object) -> None:
    from torch._inductor.autotune_process import get_visible_devices_env_var

    with _acc_replaced_by(_interface(visible_devices_env=lambda: value)):
        get_visible_devices_env_var("acc")


def _features(features: object) -> None:
    """acc's backend_features() returns ``features`` (a callable is given the
    BackendFeature enum) while Inductor asks for a framework-level member."""
    from torch._dynamo.device_interface import BackendFeature
    from torch._inductor.codegen.common import has_backend_feature

    value = features(BackendFeature) if callable(features) else features
    declared = classmethod(lambda cls, device=None: value)
    with _acc_replaced_by(_interface(backend_features=declared)):
        has_backend_feature("acc", BackendFeature.ONLINE_SOFTMAX)


def _selection(value: str) -> None:
    from rfc_shared.overlay.roster import installed

    installed().closure(selection.parse(value))


def _build_overlay(patch: str, base: TorchBase | None = None) -> None:
    from rfc_shared.overlay import Overlay
    from rfc_shared.overlay.roster import installed
    from rfc_shared.testing.helpers import format_patch, write_slice

    with tempfile.TemporaryDirectory() as root:
        text = patch or format_patch(
            "torch/_dynamo/utils.py", "no such line\n", "a changed line\n", "Stale context"
        )
        core = installed()["registry_core"]  # every slice builds on it
        base = installed_torch_base() if base is None else base
        Overlay.build([core, write_slice(Path(root), "mine", [text], base=base)])


@contextlib.contextmanager
def _acc_without_inductor_backend(hook: object = None) -> Iterator[None]:
    """acc with no Inductor backend registered, and ``hook`` (None: none) as
    its ``_inductor_backend_init``, for the block; then as before."""
    from torch._inductor.codegen import common

    tables = (
        common.device_codegens,
        common.custom_backend_passes,
        common.custom_backend_codegen_configs,
        common.device_op_overrides_dict,
    )
    saved = [dict(table) for table in tables]
    saved_hook = torch.acc._inductor_backend_init
    for table in tables:
        table.pop("acc", None)
    if hook is None:
        del torch.acc._inductor_backend_init
    else:
        torch.acc._inductor_backend_init = hook
    try:
        yield
    finally:
        torch.acc._inductor_backend_init = saved_hook
        for table, entries in zip(tables, saved, strict=True):
            table.clear()
            table.update(entries)


def _backend_features_without_backend(hook: object = None) -> None:
    from torch._inductor.codegen.common import get_backend_features

    with _acc_without_inductor_backend(hook):
        get_backend_features("acc")


def _compile_without_backend() -> None:
    with _acc_without_inductor_backend():
        torch._dynamo.reset()
        try:
            torch.compile(lambda t: t.sum())(torch.ones(4, device="acc"))
        finally:
            torch._dynamo.reset()


def _compile_with_cpp_wrapper() -> None:
    torch._dynamo.reset()
    try:
        torch.compile(lambda t: t + 1, options={"cpp_wrapper": True})(torch.ones(4, device="acc"))
    finally:
        torch._dynamo.reset()


def _interface_of_unregistered_acc() -> None:
    registry = _registry()
    with isolated():
        for key in [k for k in registry.device_interfaces if k.split(":")[0] == "acc"]:
            del registry.device_interfaces[key]
        saved_hook = torch.acc.get_device_interface
        del torch.acc.get_device_interface  # a backend that registers explicitly
        try:
            registry.get_interface_for_device("acc:1")
        finally:
            torch.acc.get_device_interface = saved_hook


MISTAKES: tuple[Mistake, ...] = (
    # registry_core: the PrivateUse1 registration entry
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "device is not a str or torch.device",
        lambda: _register(_interface(), 0),
        TypeError,
        "device must be a str or torch.device",
    ),
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "a built-in device name",
        lambda: _register(_interface(), "cuda"),
        ValueError,
        "'cuda' is a built-in device type",
    ),
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "a name that is not the PrivateUse1 backend",
        lambda: _register(_interface(), "npu"),
        ValueError,
        "'npu' is not the PrivateUse1 backend, which is named 'acc'",
    ),
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "the interface is not a class",
        lambda: _register("AccInterface"),
        TypeError,
        "device_interface must be a subclass of",
    ),
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "the interface does not subclass DeviceInterface",
        lambda: _register(object),
        TypeError,
        "device_interface must be a subclass of",
    ),
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "required methods missing",
        lambda: _register(type("Bare", (_registry().DeviceInterface,), {})),
        TypeError,
        "Bare does not implement is_available, device_count",
    ),
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "a GPU-class interface without device properties",
        lambda: _register_instead_of_acc(
            type(
                "GpuWithoutProperties",
                (_registry().DeviceInterface,),
                {
                    "is_gpu": staticmethod(lambda: True),
                    **{
                        name: staticmethod(getattr(torch.acc, name))
                        for name in ("is_available", "device_count", "current_device", "set_device")
                    },
                },
            )
        ),
        TypeError,
        "GpuWithoutProperties does not implement get_device_properties",
    ),
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "a different interface is already registered (duplicate)",
        lambda: _register(_interface()),
        RuntimeError,
        "'acc' already has the interface .*; refusing to replace it",
    ),
    Mistake(
        "get_interface_for_device",
        "the PrivateUse1 backend registered no DeviceInterface (yet)",
        _interface_of_unregistered_acc,
        NotImplementedError,
        r"No interface for device acc:1: the PrivateUse1 backend 'acc' registered no "
        r"DeviceInterface \(register_interface_for_device_PrivateUse1\('acc', ",
    ),
    # rfc2
    Mistake(
        "DeviceInterface.dynamo_constant_fold_fns",
        "an entry that is not callable",
        lambda: _register_instead_of_acc(_interface(dynamo_constant_fold_fns=("is_available",))),
        TypeError,
        "dynamo_constant_fold_fns must hold hashable functions; 'is_available' is not",
    ),
    Mistake(
        "DeviceInterface.dynamo_constant_fold_fns_need_guards",
        "None instead of a tuple",
        lambda: _register_instead_of_acc(_interface(dynamo_constant_fold_fns_need_guards=None)),
        TypeError,
        "dynamo_constant_fold_fns_need_guards must be a tuple of functions, got NoneType",
    ),
    Mistake(
        "DeviceInterface.dynamo_traced_methods",
        "a name outside the methods Dynamo traces like torch.cuda's",
        lambda: _register_instead_of_acc(_interface(dynamo_traced_methods=("launch",))),
        ValueError,
        "dynamo_traced_methods names 'launch', which is not one of current_device",
    ),
    # rfc3
    Mistake(
        'torch.compile(options={"acc.<key>": ...})',
        "an unknown key in the device's namespace",
        lambda: _compile_with({"acc.no_such_option": 1}),
        RuntimeError,
        r"Unexpected optimization option acc.no_such_option",
    ),
    Mistake(
        'torch.compile(options={"acc.<key>": ...})',
        "a value of the wrong type",
        lambda: _compile_with({"acc.check_input_devices": "yes"}),
        RuntimeError,
        "got str should be bool",
    ),
    Mistake(
        'torch.compile(options={"<device>.<key>": ...})',
        "a namespace no device registered",
        lambda: _compile_with({"npu.no_such_option": 1}),
        RuntimeError,
        "Unexpected optimization option npu.no_such_option",
    ),
    Mistake(
        "get_device_op_overrides",
        "a device nothing registered overrides for",
        lambda: _op_overrides("npu"),
        KeyError,
        r"Inductor has no DeviceOpOverrides for device 'npu': .*"
        r"register_device_op_overrides\('npu', ",
    ),
    Mistake(
        "get_backend_features",
        "the PrivateUse1 backend registered no Inductor backend and has no hook",
        _backend_features_without_backend,
        RuntimeError,
        r"Inductor has no scheduling for device 'acc': register its backend with "
        r"register_backend_for_device\('acc', .*torch.acc._inductor_backend_init\(\)",
    ),
    Mistake(
        "get_backend_features",
        "the backend's _inductor_backend_init registers nothing",
        lambda: _backend_features_without_backend(hook=lambda: None),
        RuntimeError,
        r"torch.acc._inductor_backend_init\(\) registered none",
    ),
    Mistake(
        "torch.compile on the device",
        "the device has no Inductor backend",
        _compile_without_backend,
        RuntimeError,
        r"Inductor has no (scheduling|DeviceOpOverrides) for device 'acc'",
    ),
    Mistake(
        'torch.compile(options={"cpp_wrapper": True})',
        "the device registered no C++ wrapper codegen",
        _compile_with_cpp_wrapper,
        RuntimeError,
        r"device 'acc' registered no C\+\+ wrapper codegen .*compile it without cpp_wrapper=True",
    ),
    Mistake(
        "DeviceInterface.get_cache_system_info",
        "returns data that is not JSON-serializable",
        lambda: _cache_system_info({"driver": {1, 2}}),
        UserWarning,
        "Failed to collect cache system info from device interface acc",
    ),
    Mistake(
        "DeviceInterface.visible_devices_env",
        "returns something that is not a variable name",
        lambda: _visible_devices(0),
        TypeError,
        r"visible_devices_env\(\) must return the name of an environment variable or None",
    ),
    # backend_feature
    Mistake(
        "DeviceInterface.backend_features",
        "returns names instead of BackendFeature members",
        lambda: _features(["GPU"]),
        TypeError,
        r"backend_features\(\) must return a set of BackendFeature members, got \['GPU'\]",
    ),
    Mistake(
        "DeviceInterface.backend_features",
        "declares a code-generation member, which the scheduling answers",
        lambda: _features(lambda feature: {feature.GPU, feature.FOREACH}),
        TypeError,
        r"backend_features\(\) declares BackendFeature.FOREACH, which the Inductor "
        r"scheduling registered for the device declares instead",
    ),
    # lazy_reg
    Mistake(
        "torch.<backend>.get_device_interface()",
        "the hook raises",
        lambda: _from_device_module(_raise_driver_missing),
        UserWarning,
        r"torch.acc.get_device_interface\(\) raised RuntimeError\('driver not loaded'\)",
    ),
    Mistake(
        "torch.<backend>.get_device_interface()",
        "returns an instance, not a class",
        lambda: _from_device_module(lambda: 42),
        UserWarning,
        "returned 42, not a subclass",
    ),
    Mistake(
        "torch.<backend>.get_device_interface()",
        "methods missing",
        lambda: _from_device_module(lambda: type("Bare", (_registry().DeviceInterface,), {})),
        UserWarning,
        "Bare does not implement is_available, device_count",
    ),
    # the overlay
    Mistake(
        selection.ENV,
        "names a slice that is not installed",
        lambda: _selection("rfc2,rfc9"),
        SliceError,
        "slice 'rfc9' is not installed",
    ),
    Mistake(
        selection.ENV,
        "only separators",
        lambda: _selection(" , "),
        selection.SelectionError,
        "names no slice",
    ),
    Mistake(
        "Overlay.build (a slice's series)",
        "a patch whose context does not match the installed torch",
        lambda: _build_overlay(""),
        PatchApplyError,
        "does not apply.*No module of slice 'mine' was patched",
    ),
    Mistake(
        "Overlay.build (a slice's series)",
        "a file that holds no diff",
        lambda: _build_overlay("Subject: [PATCH] empty\n\nno diff here\n"),
        OverlayError,
        "holds no diff",
    ),
    Mistake(
        "Overlay.build (a slice's series)",
        "a series for another torch version",
        lambda: _build_overlay("", base=TorchBase("2.12.0", "0" * 40)),
        BaseMismatchError,
        "torch 2.12.0",
    ),
)


def markdown(messages: dict[int, str]) -> str:
    """The matrix as a Markdown table, with the message each row produced."""
    rows = [
        "| entry point | mistake | answer | message (as produced) |",
        "|---|---|---|---|",
    ]
    for index, m in enumerate(MISTAKES):
        message = messages.get(index, "(not run)").replace("|", "\\|").replace("\n", " ")
        message = re.sub(r" at 0x[0-9a-f]+", "", message)  # object addresses vary per run
        if len(message) > 180:
            message = message[:177] + "..."
        kind = "one warning" if issubclass(m.expect, Warning) else m.expect.__name__
        rows.append(f"| `{m.entry}` | {m.mistake} | {kind} | {message} |")
    return "\n".join(rows) + "\n"
