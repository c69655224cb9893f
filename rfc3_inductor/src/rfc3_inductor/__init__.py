"""Slice ``rfc3`` (pytorch/pytorch#189137), and its follow-up ``rfc3_followup``.

Inductor discovers, configures, compiles and runs a PrivateUse1 backend.

The change itself is the patch series in ``patches/`` (the RFC's asks); what
backend authors met beyond them is the follow-up series in ``followup/``,
reviewed and exported on its own. This module only declares both to the
overlay.
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
        "calls and allocations, the ATen device type"
    ),
)

FOLLOWUP = Slice(
    name="rfc3_followup",
    package=__name__,
    requires=("registry_core", "rfc1", "rfc3"),
    title="Beyond the RFC's asks: what a PrivateUse1 backend met compiling with Inductor",
    patches_folder="followup",
    issue="beyond #189137",
    summary=(
        "what a backend met beyond the asks: C++ kernels on a host device, fast "
        "allocators, kernel-call guards, errors that say how to register, heuristics "
        "aliases, flex attention, layout optimization"
    ),
)
