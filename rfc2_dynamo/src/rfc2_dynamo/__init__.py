"""Slice ``rfc2`` (pytorch/pytorch#189136).

Dynamo traces PrivateUse1 streams, events, runtime calls and tensor classes.

The change itself is the patch series in ``patches/``; this module only
declares it to the overlay.
"""

from rfc_shared.overlay.slices import Slice


SLICE = Slice(
    name="rfc2",
    package=__name__,
    requires=("registry_core",),
    stack_after=("rfc1",),
    title="Dynamo traces PrivateUse1 streams, events, runtime calls and tensor classes",
    issue="#189136",
    summary="Dynamo's six device tables: streams, events, trace rules, constants",
)
