"""Run the probes in this process, against the torch the overlay serves."""

from __future__ import annotations

from dataclasses import dataclass

from .harness import NotApplicable, ProbeFailure
from .probes import load


@dataclass(frozen=True)
class Outcome:
    status: str  # "pass" | "fail" | "n/a" | "error"
    evidence: str


def _not_applicable_within(error: BaseException) -> NotApplicable | None:
    """The NotApplicable an error was raised from, if any: a probe that wraps
    what it calls must not turn "does not apply" into a failure."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, NotApplicable):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__
    return None


def run_probe(name: str) -> Outcome:
    try:
        evidence = load()[name].run()
    except NotApplicable as e:
        return Outcome("n/a", str(e))
    except Exception as e:
        if (reason := _not_applicable_within(e)) is not None:
            return Outcome("n/a", str(reason))
        if isinstance(e, ProbeFailure):
            return Outcome("fail", str(e))
        first = (str(e).strip().splitlines() or [""])[0][:200]
        return Outcome("error", f"{type(e).__name__}: {first}")
    return Outcome("pass", evidence)


def column_name() -> str:
    """The matrix column this process stands for (:meth:`Roster.column_of`
    of what the overlay applies)."""
    from rfc_shared import overlay
    from rfc_shared.overlay.roster import Roster

    active = overlay.active()
    applied = active.slices if active is not None else ()
    return Roster(applied).column_of(applied)


def run_all(selected: list[str] | None = None) -> dict[str, Outcome]:
    import torch  # noqa: F401  (activates the overlay)

    probes = load()
    names = selected or list(probes)
    unknown = [n for n in names if n not in probes]
    if unknown:
        raise SystemExit(f"unknown probe(s): {', '.join(unknown)}; see --list")
    return {name: run_probe(name) for name in names}
