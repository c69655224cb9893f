"""The probe registry: one small probe per site the RFCs name.

A probe returns one line of evidence when the site behaves as the RFC asks
and raises :class:`~rfc_shared.conformance.harness.ProbeFailure` (with the
evidence) when it does not; any other exception is an error of the probe's
own. Probes named ``<slice>.<site>`` check what that slice promises.

Each slice ships its probes in its own package, as the module
``<package>.probes``; :func:`load` imports those of every installed slice,
in stack order, so the probe knows no slice by name, and refuses a probe
whose ``<slice>`` is not one its package declares.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
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
    """Every installed slice's probes, in stack order.

    Raises:
        DeclarationError: a probe named after a slice its package does not
            declare.
    """
    from rfc_shared.overlay.roster import installed

    roster = installed()
    for package in dict.fromkeys(s.package for s in roster):
        module = f"{package}.probes"
        if module in sys.modules or importlib.util.find_spec(module) is None:
            continue
        before = set(PROBES)
        importlib.import_module(module)
        for name in PROBES.keys() - before:
            roster.check_probe(name, package)
    return PROBES
