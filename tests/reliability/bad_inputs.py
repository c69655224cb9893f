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
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from rfc_shared import selection
from rfc_shared.conformance.harness import isolated, register, variant
from rfc_shared.overlay import OverlayError, PatchApplyError
from rfc_shared.overlay.base import TORCH_2_13_0, TorchBase
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


def _raises(*args: object, **kwargs: object) -> object:
    raise RuntimeError("device lost")


def _interface(**overrides: object) -> type:
    return variant(**overrides)


def _trace_rules(rules: object) -> None:
    from torch._dynamo.trace_rules import register_device_trace_rules

    register_device_trace_rules(rules)  # type: ignore[arg-type]


def _skip() -> type:
    from torch._dynamo.variables import SkipFunctionVariable

    return SkipFunctionVariable


def _compile_with(options: dict[str, object]) -> None:
    torch.compile(lambda t: t + 1, options=options)


def _op_overrides(device: str) -> None:
    from torch._inductor.codegen.common import get_device_op_overrides

    get_device_op_overrides(device)


def _cache_system_info(info: object) -> None:
    from torch._inductor.codecache import CacheBase

    with _acc_replaced_by(_interface(get_cache_system_info=classmethod(lambda cls: info))):
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


class _RaisingLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        raise RuntimeError("driver not loaded")


class _RaisingFinder(importlib.abc.MetaPathFinder):
    """Finds ``name`` as a module whose import raises."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_loader(fullname, _RaisingLoader())


def _by_convention(module: types.ModuleType | None) -> None:
    """Runs lazy registration for acc with ``module`` as its convention module
    (None: a module whose import raises)."""
    registry = _registry()
    name = "torch_acc._dynamo.device_interface"
    saved = sys.modules.pop(name)
    finder = _RaisingFinder(name)
    acc_entries = {k: v for k, v in registry.device_interfaces.items() if k.split(":")[0] == "acc"}
    for key in acc_entries:
        del registry.device_interfaces[key]
    if module is None:
        sys.meta_path.insert(0, finder)
    else:
        sys.modules[name] = module
    try:
        registry._register_privateuse1_interface_by_convention()
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        sys.modules[name] = saved
        registry.device_interfaces.update(acc_entries)


def _convention_module(source: str) -> types.ModuleType:
    module = types.ModuleType("torch_acc._dynamo.device_interface")
    exec(source, module.__dict__)
    return module


def _visible_devices(value: object) -> None:
    from torch._inductor.autotune_process import get_visible_devices_env_var

    with _acc_replaced_by(_interface(visible_devices_env=lambda: value)):
        get_visible_devices_env_var("acc")


def _features(features: object) -> None:
    from torch._dynamo.device_interface import get_backend_features_for_device

    declared = classmethod(lambda cls, device=None: features)
    with _acc_replaced_by(_interface(backend_features=declared)):
        get_backend_features_for_device("acc")


def _selection(value: str) -> None:
    from rfc_shared.overlay.slices import discover_slices, resolve

    resolve(selection.parse(value), discover_slices())


def _build_overlay(patch: str, base: TorchBase = TORCH_2_13_0) -> None:
    from rfc_shared.overlay import Overlay
    from rfc_shared.overlay.slices import discover_slices
    from rfc_shared.testing.helpers import format_patch, write_slice

    with tempfile.TemporaryDirectory() as root:
        text = patch or format_patch(
            "torch/_dynamo/utils.py", "no such line\n", "a changed line\n", "Stale context"
        )
        shared = discover_slices()["shared"]  # every slice builds on it
        Overlay.build([shared, write_slice(Path(root), "mine", [text], base=base)])


def _gpu_types_remove() -> None:
    from torch._inductor.utils import GPU_TYPES

    GPU_TYPES.remove("cuda")  # type: ignore[attr-defined]


def _gpu_types_setitem() -> None:
    from torch._inductor.utils import GPU_TYPES

    GPU_TYPES[0] = "npu"  # type: ignore[index]


def _in_graph_tensor_classes(classes: object) -> None:
    _register(_interface(dynamo_tensor_classes=classes))


MISTAKES: tuple[Mistake, ...] = (
    # shared: the PrivateUse1 registration entry
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
        "device_count() raises",
        lambda: _register(_interface(device_count=_raises)),
        RuntimeError,
        r"device_count\(\) raised RuntimeError\('device lost'\); nothing was registered",
    ),
    Mistake(
        "register_interface_for_device_PrivateUse1",
        "a different interface is already registered (duplicate)",
        lambda: _register(_interface()),
        RuntimeError,
        "'acc' already has the interface .*; refusing to replace it",
    ),
    # rfc1
    Mistake(
        "GPU_TYPES",
        "removing a built-in GPU type",
        _gpu_types_remove,
        ValueError,
        "cannot be removed",
    ),
    Mistake(
        "GPU_TYPES",
        "assigning an item",
        _gpu_types_setitem,
        TypeError,
        "derived from the DeviceInterface registry",
    ),
    # rfc2
    Mistake(
        "DeviceInterface.dynamo_tensor_classes",
        "not a tuple",
        lambda: _in_graph_tensor_classes("FloatTensor"),
        TypeError,
        "dynamo_tensor_classes must be a tuple, got str",
    ),
    Mistake(
        "DeviceInterface.dynamo_tensor_classes",
        "a class not named after a CPU tensor class",
        lambda: _in_graph_tensor_classes((type("AccFloat", (), {}),)),
        TypeError,
        "dynamo_tensor_classes takes classes named after a CPU tensor class",
    ),
    Mistake(
        "DeviceInterface.dynamo_constant_fold_fns",
        "an entry that is not callable",
        lambda: _register(_interface(dynamo_constant_fold_fns=("is_available",))),
        TypeError,
        "dynamo_constant_fold_fns takes functions",
    ),
    Mistake(
        "DeviceInterface.dynamo_constant_fold_fns_need_guards",
        "None instead of a tuple",
        lambda: _register(_interface(dynamo_constant_fold_fns_need_guards=None)),
        TypeError,
        "dynamo_constant_fold_fns_need_guards must be a tuple, got NoneType",
    ),
    Mistake(
        "register_device_trace_rules",
        "a list instead of a dict",
        lambda: _trace_rules([(torch.acc.memory_allocated, _skip())]),
        TypeError,
        "rules must be a dict of function to rule",
    ),
    Mistake(
        "register_device_trace_rules",
        "a key that is not callable",
        lambda: _trace_rules({"torch.acc.memory_allocated": _skip()}),
        TypeError,
        "is not callable",
    ),
    Mistake(
        "register_device_trace_rules",
        "a rule that is not one of the two rule classes",
        lambda: _trace_rules({torch.acc.memory_allocated: "skip"}),
        TypeError,
        "must be one of TorchInGraphFunctionVariable, SkipFunctionVariable",
    ),
    Mistake(
        "register_device_trace_rules",
        "replacing PyTorch's own rule",
        lambda: _trace_rules({torch.cuda.synchronize: _skip()}),
        ValueError,
        "already has the rule TorchInGraphFunctionVariable",
    ),
    # rfc3
    Mistake(
        'torch.compile(options={"acc.<key>": ...})',
        "an unknown key in the device's namespace",
        lambda: _compile_with({"acc.no_such_option": 1}),
        RuntimeError,
        r"the options of device 'acc' are \['check_input_devices'\]",
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
        "register_device_op_overrides",
    ),
    Mistake(
        "DeviceInterface.get_cache_system_info",
        "returns data that is not JSON-serializable",
        lambda: _cache_system_info({"driver": {1, 2}}),
        UserWarning,
        "must return JSON-serializable data",
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
    # lazy_reg
    Mistake(
        "torch_<backend>._dynamo.device_interface",
        "importing the module raises",
        lambda: _by_convention(None),
        UserWarning,
        r"in torch_acc._dynamo.device_interface: importing it failed: RuntimeError\('driver not",
    ),
    Mistake(
        "torch_<backend>._dynamo.device_interface",
        "no DeviceInterface attribute",
        lambda: _by_convention(_convention_module("X = 1")),
        UserWarning,
        "the module defines no 'DeviceInterface'",
    ),
    Mistake(
        "torch_<backend>._dynamo.device_interface",
        "DeviceInterface is not a class",
        lambda: _by_convention(_convention_module("DeviceInterface = 42")),
        UserWarning,
        "'DeviceInterface' is a int, not a class",
    ),
    Mistake(
        "torch_<backend>._dynamo.device_interface",
        "methods missing",
        lambda: _by_convention(_convention_module("class DeviceInterface:\n    pass")),
        UserWarning,
        "does not implement is_available, device_count",
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
