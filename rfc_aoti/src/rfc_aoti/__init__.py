"""Slice ``aoti`` (pytorch/pytorch#189998).

torch.export + AOTInductor packages that build, load and run on a PrivateUse1
backend: AOTInductor's Python side asks the registry (DeviceOpOverrides) for
the device's ATen type, the C shims it provides and its runtime snippets.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="aoti",
    package=__name__,
    # cpp_wrapper_headers: a C++ wrapper of a device PyTorch ships no header for
    # (aoti_include/<device>.h) compiles only with it.
    requires=("registry_core", "rfc1", "rfc3", "cpp_wrapper_headers"),
    stack_after=("backend_feature", "fast_allocator", "registration_errors"),
    title="AOTInductor packages build, load and run on a PrivateUse1 backend",
    issue="#189998",
    summary=(
        "AOTInductor on a PrivateUse1 device: the model's device, C shims or the proxy "
        "executor, the runtime's device string"
    ),
)
