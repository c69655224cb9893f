"""Conformance probes of slice ``rfc3``."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
from collections.abc import Iterator

import torch

from rfc_shared.conformance.harness import (
    NotApplicable,
    ProbeFailure,
    ask_each,
    check,
    registry,
    require,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


def _common():
    return importlib.import_module("torch._inductor.codegen.common")


@contextlib.contextmanager
def _inductor_registration_removed(name: str) -> Iterator[None]:
    """Without ``name``'s Inductor registration; afterwards the registration
    the lookup made stands (putting the old objects back beside state the
    backend's init refreshed elsewhere mixes two registrations), and only what
    is still missing is put back."""
    common = _common()
    tables = (
        common.device_codegens,
        common.custom_backend_passes,
        common.custom_backend_codegen_configs,
        common.device_op_overrides_dict,
    )
    saved = [dict(table) for table in tables]
    for table in tables:
        table.pop(name, None)
    try:
        yield
    finally:
        for table, entries in zip(tables, saved, strict=True):
            if name in entries and name not in table:
                table[name] = entries[name]


@probe(
    "rfc3.backend_discovery",
    "the backend's Inductor registration runs for its device, not for the CPU's",
)
def _backend_discovery() -> str:
    common = _common()
    name = subject().name
    with _inductor_registration_removed(name):
        torch._dynamo.reset()
        torch.compile(lambda x: x + 1)(torch.ones(2))
        check(
            name not in common.device_codegens,
            f"compiling a CPU function registered {name}'s Inductor backend",
        )
        scheduling = common.get_scheduling_for_device(name)
        check(scheduling is not None, f"looking up {name}'s scheduling registered none")
    return f"{name} registers when its backend is looked up: {scheduling.__name__}"


@probe(
    "rfc3.config_keys",
    "torch.compile(options={'<device>.<key>': v}) reaches the backend",
    landed_in="2.15.0",
)
def _config_keys() -> str:
    common = _common()
    common.init_backend_registration()
    name = subject().name
    config = common.get_custom_backend_config_for_device(name)
    check(config is not None, f"{name} registered no device_custom_config")
    key = next(iter(config.get_config_copy()))
    option = f"{name}.{key}"
    try:
        torch.compile(lambda x: x, options={option: config.get_config_copy()[key]})
    except RuntimeError as e:
        raise ProbeFailure(f"{option!r}: {str(e)[:120]}") from e
    return f"options={{{option!r}: ...}} accepted"


def _overrides():
    common = _common()
    common.init_backend_registration()
    try:
        return common.get_device_op_overrides(subject().name)
    except KeyError as e:
        raise ProbeFailure(f"no DeviceOpOverrides registered for {subject().name!r}") from e


@probe("rfc3.cpp_options", "C++ build options come from the DeviceInterface", landed_in="2.15.0")
def _cpp_options() -> str:
    from torch._inductor.cpp_builder import get_cpp_torch_device_options

    name = subject().name
    interface = registry().get_interface_for_device(name)
    declared = getattr(interface, "get_cpp_device_options", None)
    check(declared is not None, "DeviceInterface.get_cpp_device_options does not exist")
    wanted = declared(False, False)
    check(wanted is not None, f"{name}'s DeviceInterface declares no C++ options")
    got = get_cpp_torch_device_options(name)
    check(list(got[0]) == list(wanted[0]), f"definitions {got[0]} are not the backend's")
    return f"definitions are {list(wanted[0])}"


@probe(
    "rfc3.aten_device_type",
    "the ATen device type comes from the DeviceOpOverrides",
    landed_in="2.15.0",
)
def _aten_device_type() -> str:
    cpp_utils = importlib.import_module("torch._inductor.codegen.cpp_utils")
    name = subject().name
    mapper = getattr(cpp_utils, "device_to_aten", None)
    try:
        got = mapper(name) if mapper is not None else cpp_utils.DEVICE_TO_ATEN[name]
    except (KeyError, AssertionError, RuntimeError) as e:
        raise ProbeFailure(f"no ATen device type for {name!r}: {type(e).__name__}") from e
    check(got == "at::kPrivateUse1", f"ATen device type of {name!r} is {got!r}")
    return f"{name} -> {got}"


@probe("rfc3.stream_type", "cpp_stream_type has a safe default", landed_in="2.15.0")
def _stream_type() -> str:
    try:
        stream_type = _overrides().cpp_stream_type()
    except NotImplementedError as e:
        raise ProbeFailure("DeviceOpOverrides.cpp_stream_type() is not implemented") from e
    return f"cpp_stream_type() is {stream_type!r}"


@probe("rfc3.visible_devices_env", "autotune uses the interface's visible-devices variable")
def _visible_devices_env() -> str:
    autotune = importlib.import_module("torch._inductor.autotune_process")
    getter = require(autotune, "get_visible_devices_env_var", "torch._inductor.autotune_process")
    try:
        answers = ask_each(
            lambda: getter(subject().name),
            declared=variant(visible_devices_env=lambda: "PROBE_VISIBLE"),
        )
    except ValueError as e:  # 2.15's helper knows CUDA and XPU only
        raise ProbeFailure(f"autotune has no variable for {subject().name!r}: {e}") from e
    check(answers["declared"] == "PROBE_VISIBLE", f"autotune uses {answers['declared']!r}")
    return "autotune subprocesses use the interface's visible-devices variable"


@probe("rfc3.cache_key", "the interface contributes to Inductor's cache key", landed_in="2.15.0")
def _cache_key() -> str:
    from torch._inductor.codecache import CacheBase

    def system() -> str:
        CacheBase.get_system.cache_clear()  # sampled once per process by design
        return json.dumps(CacheBase.get_system(), default=str)

    answers = ask_each(
        system,
        declared=variant(get_cache_system_info=classmethod(lambda cls: {"probe": "on"})),
    )
    CacheBase.get_system.cache_clear()
    check("probe" in answers["declared"], "get_cache_system_info() is not in the cache key")
    return "get_cache_system_info() is part of CacheBase.get_system()"


@probe("rfc3.two_pass_gate", "the cpp_wrapper two-pass gate asks the registry", landed_in="2.15.0")
def _two_pass_gate() -> str:
    from torch._inductor.graph import GraphLowering

    common = _common()
    check(
        hasattr(common.DeviceOpOverrides, "uses_gpu_cpp_wrapper"),
        "DeviceOpOverrides.uses_gpu_cpp_wrapper does not exist",
    )
    source = inspect.getsource(GraphLowering.codegen_with_cpp_wrapper)
    check('["cuda", "xpu"]' not in source, 'the gate still lists ["cuda", "xpu"]')
    return "codegen_with_cpp_wrapper asks uses_gpu_cpp_wrapper()"


@probe("rfc3.e2e_compile", "the corpus compiles with Inductor, no calls by hand")
def _e2e_compile() -> str:
    from rfc_shared.testing.compile_report import compile_case
    from rfc_shared.testing.corpus import CASES

    os.environ.setdefault("TRITON_INTERPRET", "1")
    compiled, eager_only = [], []
    for name in CASES:
        result = compile_case(name, "inductor", subject().name)
        if result["status"] == "eager-unsupported":
            eager_only.append(name)  # the backend cannot run it at all
        elif result["status"] != "ok":
            raise ProbeFailure(f"{name}: {result['message']} at {result['site']}")
        else:
            compiled.append(name)
    if not compiled:
        raise NotApplicable(f"the backend runs none of the corpus in eager: {eager_only}")
    skipped = f"; not run in eager by the backend: {', '.join(eager_only)}" if eager_only else ""
    return f"{len(compiled)} corpus cases compile and match the CPU{skipped}"
