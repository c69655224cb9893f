"""Slice ``rfc3`` (pytorch/pytorch#189137), and its follow-up PRs.

Inductor discovers, configures, compiles and runs a PrivateUse1 backend.

The change itself is the patch series in ``patches/`` (the RFC's asks); what
backend authors met beyond them is one follow-up per upstream PR, each in
``followups/<name>/``, reviewed and exported on its own. This module only
declares them to the overlay.
"""

from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="rfc3",
    package=__name__,
    requires=("registry_core", "rfc1"),
    stack_after=("rfc2",),
    title="Inductor discovers, configures, compiles and runs a PrivateUse1 backend",
    issue="#189137",
    summary=(
        "Inductor: per-device configs to subprocesses, the autotune variable, kernel "
        "calls and allocations, C++ kernels on a host device, the ATen device type"
    ),
)


def _followup(
    name: str,
    after: str,
    title: str,
    issue: str,
    summary: str,
    requires: tuple[str, ...] = ("registry_core", "rfc1", "rfc3"),
) -> Slice:
    return Slice(
        name=name,
        package=__name__,
        requires=requires,
        followup_of="rfc3",
        # The order the follow-ups were cut in; each also applies alone.
        stack_after=(after,),
        title=title,
        issue=issue,
        summary=summary,
    )


FAST_ALLOCATOR = _followup(
    "fast_allocator",
    "rfc3",
    "Let DeviceOpOverrides give generated code a device's fast allocator",
    "beyond #189137",
    "a device's fast allocator in generated code (`import_empty_strided_as()`)",
)
CPP_WRAPPER_HEADERS = _followup(
    "cpp_wrapper_headers",
    "fast_allocator",
    "Precompile only the C++ wrapper headers PyTorch ships",
    "beyond #189137",
    "no precompiled C++ wrapper header for a device type PyTorch ships none for",
)
CPP_OPTIONS_ERRORS = _followup(
    "cpp_options_errors",
    "cpp_wrapper_headers",
    "Let errors of DeviceInterface.get_cpp_device_options() propagate",
    "a fix of #190614",
    "the backend's own error from `get_cpp_device_options()` propagates",
)
REGISTRATION_ERRORS = _followup(
    "registration_errors",
    "cpp_options_errors",
    "Say how to register when a device has no Inductor backend",
    "beyond #189137",
    "`NoBackendForDeviceError`: errors that say how to register",
)
HEURISTIC_ALIAS = _followup(
    "heuristic_alias",
    "registration_errors",
    "Let a device type use another device type's template heuristics",
    "beyond #189137",
    "a device type uses another's template and codegen heuristics",
)
FLEX_ATTENTION = _followup(
    "flex_attention",
    "heuristic_alias",
    "Allow flex attention on a Triton-capable PrivateUse1 device",
    "#148656's review",
    "flex attention on a Triton-capable PrivateUse1 device",
)
FLEX_DECODING = _followup(
    "flex_decoding",
    "flex_attention",
    "Size flex decoding's key/value split by the query's device",
    "beside #197773",
    "flex decoding's split from the query device's multiprocessor count",
)
LAYOUT_OPT = _followup(
    "layout_opt",
    "flex_decoding",
    "Skip layout optimization where a PrivateUse1 convolution is not channels-last",
    "beyond #189137",
    "no channels-last layout where the device's convolutions return another format",
)
LAUNCH_METADATA = _followup(
    "launch_metadata",
    "layout_opt",
    "Build launch metadata only while a Triton launch hook is set",
    "beside triton-lang/triton#11881",
    "launch metadata only while a launch hook is set",
)
LOAD_DEVICE_NAME = _followup(
    "load_device_name",
    "launch_metadata",
    "Resolve a kernel's device interface by its device type, not a substring",
    "beyond #189137",
    'a device type with "hip" in its name loads its kernels on its own device',
    # A fix of the base itself: it needs no slice.
    requires=(),
)
STATIC_LAUNCHER = _followup(
    "static_launcher",
    "load_device_name",
    "Let a backend register the static launcher of its Triton kernels",
    "follow-up to #196952",
    "a backend's static Triton launcher, sent to compile subprocesses",
)
