"""The probe registry: one small probe per site the RFCs name.

A probe returns one line of evidence when the site behaves as the RFC asks
and raises :class:`~rfc_shared.conformance.harness.ProbeFailure` (with the
evidence) when it does not; any other exception is an error of the probe's
own. Probes named ``<slice>.<site>`` check what that slice promises.

Each slice ships its probes in its own package, as the module
``<package>.probes``; :func:`load` imports those of every installed slice,
in stack order, so the probe knows no slice by name.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Probe:
    """A probe.

    Args:
        name: ``<slice>.<site>``.
        summary: One line saying what it checks.
        run: Returns the evidence, or raises ProbeFailure / NotApplicable.
        landed_in: The torch release whose stock code already behaves as the
            probe asks (upstream landed that piece), if any; on older releases
            the slice's backport provides it.
    """

    name: str
    summary: str
    run: Callable[[], str]
    landed_in: str | None = None

    @property
    def slice(self) -> str:
        return self.name.split(".", 1)[0]


PROBES: dict[str, Probe] = {}


def probe(
    name: str, summary: str, landed_in: str | None = None
) -> Callable[[Callable[[], str]], Callable[[], str]]:
    """Registers the decorated function as the probe ``name``."""

    def decorate(fn: Callable[[], str]) -> Callable[[], str]:
        if name in PROBES:
            raise ValueError(f"duplicate probe {name}")
        PROBES[name] = Probe(name, summary, fn, landed_in)
        return fn

    return decorate


@functools.cache
def load() -> dict[str, Probe]:
    """Every installed slice's probes, in stack order."""
    from rfc_shared.overlay.slices import discover_slices, stack_order

    for s in stack_order(discover_slices().values()):
        module = f"{s.package}.probes"
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)
    return PROBES
