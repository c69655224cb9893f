"""One small probe per site the RFCs name.

A probe returns one line of evidence when the site behaves as the RFC asks
and raises :class:`~rfc_shared.conformance.harness.ProbeFailure` (with the
evidence) when it does not; any other exception is an error of the probe's
own. Probes named ``<slice>.<site>`` check what that slice promises.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .harness import ProbeFailure, base_interface, check, isolated, register, subject, variant


@dataclass(frozen=True)
class Probe:
    name: str
    summary: str
    run: Callable[[], str]

    @property
    def slice(self) -> str:
        return self.name.split(".", 1)[0]


PROBES: dict[str, Probe] = {}


def probe(name: str, summary: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    def decorate(fn: Callable[[], str]) -> Callable[[], str]:
        if name in PROBES:
            raise ValueError(f"duplicate probe {name}")
        PROBES[name] = Probe(name, summary, fn)
        return fn

    return decorate


def _registry():
    return importlib.import_module("torch._dynamo.device_interface")


def _require(module: object, attribute: str, where: str) -> object:
    value = getattr(module, attribute, None)
    check(value is not None, f"{where}.{attribute} does not exist")
    return value


def _answers(question: Callable[[], object], **cases: type) -> dict[str, object]:
    """What ``question()`` returns with each interface registered in turn."""
    answers = {}
    for label, interface in cases.items():
        with isolated():
            register(interface)
            answers[label] = question()
    return answers


# --- shared ----------------------------------------------------------------


@probe("shared.register_privateuse1", "PrivateUse1 entry: validates, never clobbers")
def _register_privateuse1() -> str:
    registry = _registry()
    entry = _require(registry, "register_interface_for_device_PrivateUse1", "device_interface")
    name = subject().name
    with isolated():
        register(base_interface())
        before = dict(registry.device_interfaces)
        try:
            entry("cuda", base_interface())
        except ValueError:
            pass
        else:
            raise ProbeFailure("registering under 'cuda' was accepted")
        check(registry.device_interfaces == before, "a refused registration changed the registry")
        count = subject().module.device_count()
        check(
            all(f"{name}:{i}" in registry.device_interfaces for i in range(count)),
            f"indexed names {name}:0..{count - 1} were not registered",
        )
    return (
        f"registers {name} and {name}:0..{count - 1}; refuses 'cuda' leaving the registry as it was"
    )


@probe("shared.indexed_lookup", "get_interface_for_device resolves indexed names")
def _indexed_lookup() -> str:
    registry = _registry()
    name = subject().name
    listing = _require(registry, "get_interface_for_device__PrivateUse1", "device_interface")
    with isolated():
        interface = variant()
        register(interface)
        far = f"{name}:{subject().module.device_count() + 5}"
        try:
            found = registry.get_interface_for_device(far)
        except NotImplementedError as e:
            raise ProbeFailure(f"get_interface_for_device({far!r}) raised: {e}") from e
        check(found is interface, f"get_interface_for_device({far!r}) is {found}")
        check((name, interface) in listing(), f"{name} missing from {listing.__name__}()")
    return (
        f"{far!r} resolves to the {name} interface; listed by get_interface_for_device__PrivateUse1"
    )


# --- rfc1 ------------------------------------------------------------------


def _utils():
    return importlib.import_module("torch._inductor.utils")


@probe("rfc1.is_gpu", "is_gpu(device) asks the interface")
def _is_gpu() -> str:
    name = subject().name
    answers = _answers(
        lambda: _utils().is_gpu(name),
        gpu=variant(is_gpu=lambda: True),
        not_gpu=variant(is_gpu=lambda: False),
    )
    check(answers == {"gpu": True, "not_gpu": False}, f"is_gpu({name!r}) answered {answers}")
    return f"is_gpu({name!r}) follows the interface: {answers}"


@probe("rfc1.gpu_types", "GPU_TYPES is derived from the registry, late binding")
def _gpu_types() -> str:
    name = subject().name
    utils = _utils()  # imported before the backend registers
    answers = _answers(
        lambda: name in list(utils.GPU_TYPES),
        gpu=variant(is_gpu=lambda: True),
        not_gpu=variant(is_gpu=lambda: False),
    )
    check(answers == {"gpu": True, "not_gpu": False}, f"{name!r} in GPU_TYPES: {answers}")
    return f"{name!r} in GPU_TYPES follows the interface, registered after import: {answers}"


@probe("rfc1.get_gpu_type", "get_gpu_type() returns the PrivateUse1 GPU")
def _get_gpu_type() -> str:
    name = subject().name
    answers = _answers(lambda: _utils().get_gpu_type(), gpu=variant(is_gpu=lambda: True))
    check(answers["gpu"] == name, f"get_gpu_type() is {answers['gpu']!r} with a GPU-class {name}")
    return f"get_gpu_type() is {name!r}"


@probe("rfc1.has_triton", "has_triton() walks is_triton_capable of registered interfaces")
def _has_triton() -> str:
    from torch.utils._triton import has_triton, has_triton_package

    check(has_triton_package(), "the triton package is not installed")
    answers = _answers(
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
    base = _registry().DeviceInterface
    answers = _answers(
        lambda: _utils().device_need_guard(name),
        streams=variant(is_gpu=lambda: True),
        no_streams=variant(is_gpu=lambda: True, Stream=base.Stream),
    )
    check(
        answers == {"streams": True, "no_streams": False},
        f"device_need_guard({name!r}) answered {answers}",
    )
    return f"device_need_guard({name!r}) follows the Stream slot: {answers}"


@probe("rfc1.multi_processor_count", "DeviceProperties uses get_multi_processor_count")
def _multi_processor_count() -> str:
    from torch._inductor.runtime.hints import DeviceProperties

    answers = _answers(
        lambda: DeviceProperties.create(subject().device).multi_processor_count,
        custom=variant(get_multi_processor_count=classmethod(lambda cls, device=None: 7)),
    )
    check(
        answers["custom"] == 7,
        f"multi_processor_count is {answers['custom']}, the interface says 7",
    )
    return "DeviceProperties.multi_processor_count comes from the interface"


# --- rfc2 ------------------------------------------------------------------


def _in_graph_classes() -> set[type]:
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    return set(UserDefinedClassVariable._in_graph_classes())


@probe("rfc2.stream_event_classes", "the backend's Stream and Event are in-graph classes")
def _stream_event_classes() -> str:
    _in_graph_classes()  # filled before the backend registers
    interface = base_interface()
    answers = _answers(
        lambda: {interface.Stream, interface.Event} <= _in_graph_classes(), late=interface
    )
    check(answers["late"], f"{interface.Stream.__name__}/{interface.Event.__name__} not in-graph")
    return "Stream and Event of the registered interface are in-graph classes"


@probe("rfc2.tensor_classes", "dtype tensor classes of the backend are in-graph classes")
def _tensor_classes() -> str:
    marker = type("FloatTensor", (), {"__module__": __name__})  # named as its CPU class
    answers = _answers(
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
    _require(trace_rules, "register_device_trace_rules", "torch._dynamo.trace_rules")
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


# --- rfc3 ------------------------------------------------------------------


def _common():
    return importlib.import_module("torch._inductor.codegen.common")


@probe("rfc3.entry_point_discovery", "the Inductor backend is found through an entry point")
def _entry_point_discovery() -> str:
    common = _common()
    common.init_backend_registration()
    scheduling = common.get_scheduling_for_device(subject().name)
    check(scheduling is not None, f"no Inductor scheduling registered for {subject().name!r}")
    return f"{subject().name} has scheduling {getattr(scheduling, '__name__', scheduling)}"


@probe("rfc3.config_keys", "torch.compile(options={'<device>.<key>': v}) reaches the backend")
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


@probe("rfc3.cpp_options", "C++ build options come from the DeviceOpOverrides")
def _cpp_options() -> str:
    from torch._inductor.cpp_builder import get_cpp_torch_device_options

    overrides = _overrides()
    declared = getattr(overrides, "get_cpp_torch_device_options", None)
    check(declared is not None, "the DeviceOpOverrides declare no C++ options")
    wanted = declared()[0]
    got = get_cpp_torch_device_options(subject().name)[0]
    check(
        wanted and all(any(w.strip() == g.strip() for g in got) for w in wanted),
        f"definitions {got} lack the backend's {wanted}",
    )
    return f"definitions include {wanted}"


@probe("rfc3.aten_device_type", "the ATen device type comes from the DeviceOpOverrides")
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


@probe("rfc3.stream_type", "cpp_stream_type has a safe default")
def _stream_type() -> str:
    try:
        stream_type = _overrides().cpp_stream_type()
    except NotImplementedError as e:
        raise ProbeFailure("DeviceOpOverrides.cpp_stream_type() is not implemented") from e
    return f"cpp_stream_type() is {stream_type!r}"


@probe("rfc3.visible_devices_env", "autotune uses the interface's visible-devices variable")
def _visible_devices_env() -> str:
    autotune = importlib.import_module("torch._inductor.autotune_process")
    getter = _require(autotune, "get_visible_devices_env_var", "torch._inductor.autotune_process")
    answers = _answers(
        lambda: getter(subject().name),
        declared=variant(visible_devices_env=lambda: "PROBE_VISIBLE"),
    )
    check(answers["declared"] == "PROBE_VISIBLE", f"autotune uses {answers['declared']!r}")
    return "autotune subprocesses use the interface's visible-devices variable"


@probe("rfc3.cache_key", "the interface contributes to Inductor's cache key")
def _cache_key() -> str:
    from torch._inductor.codecache import CacheBase

    def system() -> str:
        CacheBase.get_system.cache_clear()  # sampled once per process by design
        return json.dumps(CacheBase.get_system(), default=str)

    answers = _answers(
        system,
        declared=variant(get_cache_system_info=classmethod(lambda cls: {"probe": "on"})),
    )
    CacheBase.get_system.cache_clear()
    check("probe" in answers["declared"], "get_cache_system_info() is not in the cache key")
    return "get_cache_system_info() is part of CacheBase.get_system()"


@probe("rfc3.two_pass_gate", "the cpp_wrapper two-pass gate asks the registry")
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
    for name in CASES:
        result = compile_case(name, "inductor", subject().name)
        if result["status"] != "ok":
            raise ProbeFailure(f"{name}: {result['message']} at {result['site']}")
    return f"all {len(CASES)} corpus cases compile and match the CPU"


# --- lazy_reg --------------------------------------------------------------


@probe("lazy_reg.convention", "the convention module's interface is registered lazily")
def _convention() -> str:
    name = subject().name
    code = (
        "import json, sys, torch, importlib\n"
        f"importlib.import_module('torch_{name}')\n"
        "light = 'torch._dynamo' not in sys.modules\n"
        "from torch._dynamo.device_interface import get_interface_for_device\n"
        "try:\n"
        f"    found = get_interface_for_device('{name}')\n"
        "    origin = [c.__module__ for c in found.__mro__]\n"
        "except NotImplementedError as e:\n"
        "    origin = str(e)\n"
        "print(json.dumps([light, origin]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    light, origin = json.loads(done.stdout.strip().splitlines()[-1])
    check(light, f"import torch_{name} imported torch._dynamo")
    module = f"torch_{name}._dynamo.device_interface"
    check(isinstance(origin, list) and module in origin, f"first Dynamo lookup: {origin}")
    return f"{module}.DeviceInterface registered on first use; import stays light"


# --- backend_feature -------------------------------------------------------


def _backend_feature_enum():
    for where in ("torch._dynamo.device_interface", "torch._inductor.codegen.common"):
        enum = getattr(importlib.import_module(where), "BackendFeature", None)
        if enum is not None and hasattr(enum, "GPU"):
            return enum
    raise ProbeFailure("BackendFeature.GPU does not exist")


@probe("backend_feature.gpu", "BackendFeature.GPU decides is_gpu")
def _feature_gpu() -> str:
    feature = _backend_feature_enum()
    name = subject().name
    derived = classmethod(_registry().DeviceInterface.is_gpu.__func__)  # is_gpu from features
    answers = _answers(
        lambda: _utils().is_gpu(name),
        declared=variant(is_gpu=derived, backend_features=lambda device=None: {feature.GPU}),
        empty=variant(is_gpu=derived, backend_features=lambda device=None: set()),
    )
    check(answers == {"declared": True, "empty": False}, f"is_gpu({name!r}) answered {answers}")
    return f"is_gpu follows backend_features(): {answers}"


@probe("backend_feature.fp16_fft", "FP16 FFT support is a backend feature")
def _feature_fp16_fft() -> str:
    feature = _backend_feature_enum()
    check(hasattr(feature, "FP16_FFT"), "BackendFeature.FP16_FFT does not exist")
    from torch._refs.fft import _promote_type_fft

    def half_allowed() -> bool:
        try:
            return _promote_type_fft(torch.float16, False, subject().device) == torch.float16
        except RuntimeError:
            return False

    answers = _answers(
        half_allowed,
        declared=variant(backend_features=lambda device=None: {feature.FP16_FFT}),
        empty=variant(backend_features=lambda device=None: set()),
    )
    check(answers == {"declared": True, "empty": False}, f"half FFT allowed: {answers}")
    return f"half-precision FFT follows backend_features(): {answers}"
