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
    base_interface,
    check,
    exposes_streams,
    isolated,
    register,
    registry,
    require,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


def _common():
    return importlib.import_module("torch._inductor.codegen.common")


def _tables() -> tuple[dict, ...]:
    common = _common()
    return (
        common.device_codegens,
        common.custom_backend_passes,
        common.custom_backend_codegen_configs,
        common.device_op_overrides_dict,
    )


def _init_builtin_backends() -> None:
    """Inductor's own backends, registered once per process: done before the
    tables are saved, or restoring them would drop what registered meanwhile
    and never register it again."""
    common = _common()
    init = getattr(common, "_init_builtin_backend_registration", None)
    if init is not None:
        init()
    else:  # 2.13 and 2.11 register them on every init_backend_registration()
        common.init_backend_registration()
    common._initialize_device_op_overrides()


@contextlib.contextmanager
def _inductor_tables_restored() -> Iterator[None]:
    """Inductor's backend tables as they are now, put back afterwards."""
    _init_builtin_backends()
    saved = [dict(table) for table in _tables()]
    try:
        yield
    finally:
        for table, entries in zip(_tables(), saved, strict=True):
            table.clear()
            table.update(entries)


@contextlib.contextmanager
def _inductor_registration_removed(name: str) -> Iterator[None]:
    """Without ``name``'s Inductor registration; afterwards the registration
    the lookup made stands (putting the old objects back beside state the
    backend's init refreshed elsewhere mixes two registrations), and only what
    is still missing is put back."""
    _init_builtin_backends()
    saved = [dict(table) for table in _tables()]
    for table in _tables():
        table.pop(name, None)
    try:
        yield
    finally:
        for table, entries in zip(_tables(), saved, strict=True):
            if name in entries and name not in table:
                table[name] = entries[name]


@probe(
    "rfc3.backend_discovery",
    "a compile runs torch.<backend>._inductor_backend_init while the backend is unregistered",
    landed_in="2.15.0",
)
def _backend_discovery() -> str:
    common = _common()
    name = subject().name
    if getattr(subject().module, "_inductor_backend_init", None) is None:
        raise NotApplicable(
            f"torch.{name} has no _inductor_backend_init: the backend registers its "
            "Inductor backend itself"
        )
    with _inductor_registration_removed(name):
        torch._dynamo.reset()
        try:
            # A graph of ATen calls: no C++ kernel to build for the answer.
            torch.compile(torch.mm)(torch.ones(2, 2), torch.ones(2, 2))
        except Exception as e:
            from rfc_shared.conformance.compile_report import first_line

            raise ProbeFailure(
                f"a compile ran {name}'s _inductor_backend_init, which raised: "
                f"{type(e).__name__}: {first_line(e)[:160]}"
            ) from e
        scheduling = common.get_scheduling_for_device(name)
        check(
            scheduling is not None,
            f"a compile left {name} without an Inductor backend: its "
            "_inductor_backend_init registered none",
        )
    return f"the first compile registered {name}'s backend: {scheduling.__name__}"


def _probe_config():
    """A device config module of the probe's own, for a backend that registered
    none: the site is the routing of ``<device>.<key>`` options."""
    return importlib.import_module("rfc_shared.conformance.probe_device_config")


@probe(
    "rfc3.config_keys",
    "torch.compile(options={'<device>.<key>': v}) reaches the backend",
    landed_in="2.15.0",
)
def _config_keys() -> str:
    common = _common()
    name = subject().name
    with _inductor_tables_restored():
        config = _registered_config(name)
        own = config is not None
        if not own:
            # A stand-in registration that carries the probe's options only.
            config = _probe_config()
            common.register_backend_for_device(name, object, object, device_custom_config=config)
        key = next(iter(config.get_config_copy()))
        option = f"{name}.{key}"
        try:
            torch.compile(lambda x: x, options={option: config.get_config_copy()[key]})
        except RuntimeError as e:
            raise ProbeFailure(f"{option!r}: {str(e)[:120]}") from e
    whose = "" if own else f" (a stand-in config: {name} registered none)"
    return f"options={{{option!r}: ...}} accepted{whose}"


def _registered_config(name: str):
    """The device config the backend registered, if it registered one (its
    registration may refuse this torch: then it has none here)."""
    common = _common()
    try:
        common.init_backend_registration()
        return common.get_custom_backend_config_for_device(name)
    except Exception:
        return None


def _overrides():
    common = _common()
    common.init_backend_registration()
    try:
        return common.get_device_op_overrides(subject().name)
    except KeyError as e:
        raise ProbeFailure(f"no DeviceOpOverrides registered for {subject().name!r}") from e


_PROBE_CPP_OPTIONS = (["RFC_PROBE_DEVICE"], [], [], [], [], [], [])


@probe("rfc3.cpp_options", "C++ build options come from the DeviceInterface", landed_in="2.15.0")
def _cpp_options() -> str:
    from torch._inductor.cpp_builder import get_cpp_torch_device_options

    name = subject().name
    check(
        hasattr(registry().DeviceInterface, "get_cpp_device_options"),
        "DeviceInterface.get_cpp_device_options does not exist",
    )
    interface = base_interface()
    wanted = interface.get_cpp_device_options(False, False)
    own = wanted is not None
    if not own:  # a backend that needs none: a variant declaring the probe's
        interface = variant(
            get_cpp_device_options=lambda aot_mode, compile_only: _PROBE_CPP_OPTIONS
        )
        wanted = _PROBE_CPP_OPTIONS
    with isolated():
        register(interface)
        got = get_cpp_torch_device_options(name)
    whose = "the backend's" if own else f"a variant's ({name} declares none)"
    check(list(got[0]) == list(wanted[0]), f"definitions {got[0]} are not {whose}")
    return f"definitions are {list(wanted[0])}, {whose}"


class _AtenOverrides:
    """Stand-in DeviceOpOverrides declaring the PrivateUse1 ATen device type,
    for a backend whose overrides declare none (it has no C++ wrapper)."""

    def aten_device_type(self) -> str:
        return "at::kPrivateUse1"


@probe(
    "rfc3.aten_device_type",
    "the ATen device type comes from the DeviceOpOverrides",
    landed_in="2.15.0",
)
def _aten_device_type() -> str:
    common = _common()
    cpp_utils = importlib.import_module("torch._inductor.codegen.cpp_utils")
    name = subject().name
    mapper = getattr(cpp_utils, "device_to_aten", None)
    with _inductor_tables_restored():
        own = _declares_aten_device_type(name)
        if not own:
            stand_in = type("ProbeOverrides", (_AtenOverrides, common.DeviceOpOverrides), {})
            common.device_op_overrides_dict[name] = stand_in()
        try:
            got = mapper(name) if mapper is not None else cpp_utils.DEVICE_TO_ATEN[name]
        except (KeyError, AssertionError, RuntimeError) as e:
            raise ProbeFailure(f"no ATen device type for {name!r}: {type(e).__name__}") from e
    check(got == "at::kPrivateUse1", f"ATen device type of {name!r} is {got!r}")
    whose = "" if own else f" (stand-in overrides: {name}'s declare no ATen device type)"
    return f"{name} -> {got}{whose}"


@probe(
    "rfc3.aten_device_type_default",
    "a PrivateUse1 device that declares no ATen device type gets at::kPrivateUse1",
)
def _aten_device_type_default() -> str:
    common = _common()
    cpp_utils = importlib.import_module("torch._inductor.codegen.cpp_utils")
    mapper = getattr(cpp_utils, "device_to_aten", None)
    if mapper is None:
        raise ProbeFailure("this torch has no device_to_aten(): the ATen device type is a table")
    name = subject().name
    with _inductor_tables_restored():
        # Overrides that declare nothing, as a backend registering minimal slots has.
        common.device_op_overrides_dict[name] = common.DeviceOpOverrides()
        try:
            got = mapper(name)
        except RuntimeError as e:
            raise ProbeFailure(
                f"{name}'s overrides declare no ATen device type and the base refuses: "
                f"{str(e).splitlines()[0]}"
            ) from e
    check(got == "at::kPrivateUse1", f"ATen device type of {name!r} is {got!r}")
    return f"{name} -> {got} without declaring it"


def _declares_aten_device_type(name: str) -> bool:
    common = _common()
    try:
        overrides = common.get_device_op_overrides(name)
    except Exception:  # none registered, or a registration that refuses this torch
        return False
    return type(overrides).aten_device_type is not common.DeviceOpOverrides.aten_device_type


# What CppWrapperGpu writes with DeviceOpOverrides.cpp_stream_type(): each
# kernel's launcher function takes the stream as a parameter and passes it to
# launchKernel (from kernel_driver()); the JIT wrapper declares one stream per
# device and has aoti_get_stream() fill it.
_STREAM_USE = """\
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
{header}
{driver}
static void launch_probe_kernel({kernel_type} kernel, int32_t device_idx_, {stream_type} stream_) {{
    uint32_t grid_0 = 1, grid_1 = 1, grid_2 = 1;
    void* kernel_args_[] = {{nullptr}};
    launchKernel(kernel, grid_0, grid_1, grid_2, 4, 0, kernel_args_, stream_{pdl});
}}
static void call_probe_kernel({kernel_type} kernel) {{
    {stream_type} stream0;
    AOTI_TORCH_ERROR_CODE_CHECK({get_stream}(0, (void**)&stream0));
    launch_probe_kernel(kernel, 0, stream0);
}}
"""


# The snippets _STREAM_USE takes from the device's DeviceOpOverrides.
_SNIPPETS = {
    "header": "kernel_header",
    "driver": "kernel_driver",
    "kernel_type": "cpp_kernel_type",
    "stream_type": "cpp_stream_type",
    "get_stream": "aoti_get_stream",
}


def compile_stream_use(overrides: object, device: str) -> str | None:
    """Compiles (syntax only) the C++ that Inductor's GPU wrapper writes around
    ``overrides.cpp_stream_type()``, with ``device``'s build options.

    Returns:
        None when it compiles, else the compiler's first error.

    Raises:
        NotImplementedError: naming the snippet ``overrides`` does not give.
    """
    import subprocess

    from torch._inductor.cpp_builder import get_cpp_compiler, get_cpp_torch_device_options
    from torch.utils.cpp_extension import include_paths

    snippets = {}
    for key, method in _SNIPPETS.items():
        try:
            snippets[key] = getattr(overrides, method)()
        except NotImplementedError as e:
            raise NotImplementedError(f"DeviceOpOverrides.{method}()") from e
    pdl = getattr(overrides, "cpp_kernel_launch_supports_pdl", lambda: False)()
    source = _STREAM_USE.format(**snippets, pdl=", false" if pdl else "")
    try:
        definitions, include_dirs, *_ = get_cpp_torch_device_options(device)
    except Exception:  # a device Inductor has no build options for: torch's own
        definitions, include_dirs = [], []
    command = [
        get_cpp_compiler(),
        "-std=c++17",
        "-fsyntax-only",
        *(f"-D{d}" for d in definitions),
        *(f"-I{d}" for d in [*include_paths(), *include_dirs]),
        "-x",
        "c++",
        "-",
    ]
    env = {**os.environ, "LC_ALL": "C"}  # the compiler's messages in ASCII
    done = subprocess.run(command, input=source, capture_output=True, text=True, env=env)
    if done.returncode == 0:
        return None
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    return (errors or done.stderr.splitlines() or ["no output"])[0].split("error: ", 1)[-1]


def _registers_gpu_cpp_wrapper(name: str) -> bool:
    """Whether ``name`` registered Inductor's C++ wrapper of GPU kernels, the
    one reader of cpp_stream_type()."""
    common = _common()
    gpu_wrapper = importlib.import_module("torch._inductor.codegen.cpp_wrapper_gpu").CppWrapperGpu
    wrapper = common.get_wrapper_codegen_for_device(name, cpp_wrapper=True)
    return isinstance(wrapper, type) and issubclass(wrapper, gpu_wrapper)


@probe(
    "rfc3.stream_type",
    "generated C++ that declares and passes a stream compiles with cpp_stream_type",
    landed_in="2.15.0",
)
def _stream_type() -> str:
    name = subject().name
    if not exposes_streams(base_interface()):
        raise NotApplicable(f"{name} has no streams: no C++ stream type is emitted for it")
    if getattr(subject().module, "Stream", None) is None:
        # The interface names a Stream class the device module does not have:
        # no stream of it is ever made, so none reaches generated code.
        raise NotApplicable(f"torch.{name} has no Stream: no C++ stream type is emitted for it")
    overrides = _overrides()
    if not _registers_gpu_cpp_wrapper(name):
        raise NotApplicable(
            f"{name} registers no C++ wrapper for GPU kernels (a CppWrapperGpu as "
            "register_backend_for_device's cpp_wrapper_codegen), the only generated code that "
            "declares a stream: cpp_stream_type() is read by nothing (backend guide, section 4)"
        )
    try:
        stream_type = overrides.cpp_stream_type()
    except NotImplementedError as e:
        raise ProbeFailure(
            f"DeviceOpOverrides.cpp_stream_type() is not implemented, and {name}'s C++ wrapper "
            "declares each stream with it (backend guide, section 4)"
        ) from e
    try:
        error = compile_stream_use(overrides, name)
    except NotImplementedError as e:
        raise ProbeFailure(
            f"{name}'s C++ wrapper writes its streams with {e}, which is not implemented"
        ) from e
    check(
        error is None,
        f"the C++ wrapper's stream code does not compile with cpp_stream_type() "
        f"{stream_type!r}: {error}. It is the type launchKernel (kernel_driver()) takes and "
        f"{overrides.aoti_get_stream()}() fills (backend guide, section 4)",
    )
    return f"the C++ wrapper's stream code compiles with cpp_stream_type() {stream_type!r}"


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


@probe(
    "rfc3.kernel_call_guard",
    "generated code enters the device's kernel_call_guard around each non-Triton kernel call",
)
def _kernel_call_guard() -> str:
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen
    from torch._inductor.graph import GraphLowering
    from torch._inductor.virtualized import V

    from rfc_shared.conformance.compile_report import first_line

    common = _common()
    name = subject().name

    class GuardedOverrides(common.DeviceOpOverrides):
        def kernel_call_guard(self, kernel_name: str, call_args: list[str]) -> str:
            return f"probe_guard({', '.join(call_args)})"

    # The backend as a host device (C++ kernels, no streams), whose overrides
    # give a guard; the Python wrapper emits one kernel call.
    try:
        with isolated(), _inductor_tables_restored():
            register(variant(is_gpu=lambda: False))
            common.register_backend_for_device(name, object, PythonWrapperCodegen)
            common.device_op_overrides_dict[name] = GuardedOverrides()
            graph = GraphLowering(torch.fx.symbolic_trace(lambda t: t + 1))
            with V.set_graph_handler(graph):
                wrapper = PythonWrapperCodegen()
                wrapper._generate_kernel_call_helper(
                    "kernel0", ["buf0", "arg0_1"], device=subject().device, triton=False
                )
            line = str(wrapper.lines[-1])
    except NotApplicable:
        raise
    except Exception as e:
        if str(e) == f"device {name} nyi":  # the wrapper's words for a device it does not list
            raise ProbeFailure(
                f"Inductor's wrapper emits host (non-Triton) kernel calls for cpu and mps only: "
                f"one on {name} raises RuntimeError 'device {name} nyi'"
            ) from e
        raise ProbeFailure(
            f"a host kernel call on {name}: {type(e).__name__}: {first_line(e)[:120]}"
        ) from e
    check(
        line == "with probe_guard(buf0, arg0_1): kernel0(buf0, arg0_1)",
        f"a host kernel call on {name} is emitted as {line!r}",
    )
    return f"emitted as {line!r}"


def _eager_is_wrong(case_name: str) -> str | None:
    """How the backend's eager result of a corpus case differs from the CPU's,
    or None when it agrees: the corpus compares a compile with the CPU, so a
    wrong eager kernel would otherwise be blamed on the compile."""
    from rfc_shared.conformance.compile_report import first_line
    from rfc_shared.conformance.corpus import CASES, assert_same, run

    case = CASES[case_name]
    try:
        assert_same(case, run(case, subject().name), run(case, "cpu"))
    except AssertionError as e:
        return first_line(e)[:160]
    return None


def _eager_gap(result: dict) -> str:
    """Why the backend cannot run a corpus case in eager mode, and where the
    backend guide says what to do."""
    message = result["message"]
    if "convolution_overrideable" in message:
        return (
            "no eager convolution: give the device convolution and convolution_backward "
            "kernels, which Inductor calls too (backend guide, section 1, Convolutions)"
        )
    return f"{result['error']}: {message[:120]}"


@probe("rfc3.e2e_compile", "the corpus compiles with Inductor, no calls by hand")
def _e2e_compile() -> str:
    from rfc_shared.conformance.compile_report import compile_case
    from rfc_shared.conformance.corpus import CASES

    os.environ.setdefault("TRITON_INTERPRET", "1")
    compiled, eager_only, eager_wrong = [], {}, {}
    for name in CASES:
        result = compile_case(name, "inductor", subject().name)
        if result["status"] == "eager-unsupported":
            eager_only[name] = _eager_gap(result)  # the backend cannot run it at all
        elif result["status"] == "ok":
            compiled.append(name)
        elif (wrong := _eager_is_wrong(name)) is not None:
            eager_wrong[name] = wrong
        else:
            raise ProbeFailure(f"{name}: {result['message']} at {result['site']}")
    gaps: dict[str, list[str]] = {}
    for name, gap in eager_only.items():
        gaps.setdefault(gap, []).append(name)
    skipped = "".join(
        f"; not run in eager by the backend: {', '.join(names)} ({gap})"
        for gap, names in gaps.items()
    )
    if eager_wrong:
        wrong = "; ".join(f"{case}: {how}" for case, how in eager_wrong.items())
        raise NotApplicable(
            f"the backend's eager kernels are wrong (eager on {subject().name} differs from "
            f"eager on the CPU), so their compile cannot be judged: {wrong}; "
            f"{len(compiled)} other cases compile and match the CPU{skipped}"
        )
    if not compiled:
        raise NotApplicable(f"the backend runs none of the corpus in eager{skipped}")
    return f"{len(compiled)} corpus cases compile and match the CPU{skipped}"
