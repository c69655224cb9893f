"""The evidence under the text table: for each FAIL and ERROR what the base
or the backend lacks and what to do; each n/a in one line.

Cells of one probe that say the same thing are given once, with their
columns.
"""

from __future__ import annotations

from rfc_shared.overlay.roster import Roster, installed

from .probes import load


Matrix = dict[str, dict[str, dict[str, str]]]  # probe -> column -> {status, evidence}


#: Exceptions torch raises around a failure inside its own compiler: where
#: one is the evidence, the cell shows a bug (in torch or a slice), not a
#: piece the backend lacks.
INTERNAL_ERRORS = (
    "InductorError",
    "BackendCompilerFailed",
    "InternalTorchDynamoError",
    "LoweringException",
)


def advice(
    probe: str,
    column: str,
    status: str,
    evidence: str = "",
    columns: dict[str, dict[str, str]] | None = None,
    roster: Roster | None = None,
) -> str:
    """What to do about a FAIL or ERROR of ``probe`` in ``column``, read from
    the probe's other ``columns`` where it has them: the smallest column that
    passes names the slices still missing; a failure inside torch's compiler
    is a bug to report; only a cell that passes nowhere, with the probe's
    slice applied, is the backend's to fix."""
    known = load().get(probe)
    site = probe.split(".", 1)[0]
    internal = next((name for name in INTERNAL_ERRORS if name in evidence), None)
    if internal:
        return (
            f"the failure is inside torch ({internal}), not a piece the backend lacks: a bug in "
            "torch or in a slice; report it with the --json output."
        )
    if "InterpreterError" in evidence:
        return (
            "a Triton kernel failed in Triton's interpreter: see the backend guide's "
            "'What goes wrong' for the messages and their fixes."
        )
    slices_of = (roster or installed()).column
    have = slices_of(column)
    passing = [c for c, o in (columns or {}).items() if o.get("status") == "pass"]
    larger = sorted((c for c in passing if slices_of(c) > have), key=lambda c: len(slices_of(c)))
    if larger:
        missing = ", ".join(sorted(slices_of(larger[0]) - have))
        text = f"passes in the {larger[0]} column: apply {missing} as well."
        # A column with fewer slices, though not all of this one's, may pass too.
        fewest = min(passing, key=lambda c: len(slices_of(c)))
        if len(slices_of(fewest)) < len(slices_of(larger[0])) and not slices_of(fewest) <= have:
            fewer = ", ".join(sorted(slices_of(fewest)))
            text += f" The {fewest} column passes with fewer: {fewer}."
        return text
    smaller = [c for c in passing if slices_of(c) < have]
    if smaller:
        added = ", ".join(sorted(have - slices_of(smaller[0])))
        return (
            f"passes in the {smaller[0]} column, so applying {added} breaks it: a bug in the "
            "slice; report it with the --json output."
        )
    if status == "error":
        return (
            "the probe could not run here; the base or the backend lacks what the line above "
            "names. If it names neither, report it with the --json output."
        )
    if site not in have:
        landed = f" (upstream from torch {known.landed_in})" if known and known.landed_in else ""
        return f"this torch lacks it: the {site} slice brings it{landed}."
    return (
        f"the {site} slice is applied and no column passes, so the backend lacks what the line "
        "above names: give it that (see the backend guide)."
    )


def as_text(matrix: Matrix) -> str:
    """The evidence of every FAIL, ERROR and n/a cell; empty when all pass."""
    blocks: list[str] = []
    for probe, cols in matrix.items():
        groups: dict[tuple[str, str, str], list[str]] = {}
        for column, outcome in cols.items():
            status = outcome["status"]
            if status in ("pass", None):
                continue
            what = (
                "" if status == "n/a" else advice(probe, column, status, outcome["evidence"], cols)
            )
            groups.setdefault((status, outcome["evidence"], what), []).append(column)
        for (status, evidence, what), where in groups.items():
            label = "n/a" if status == "n/a" else status.upper()
            head = f"{label} {probe} [{', '.join(where)}]: {evidence}"
            blocks.append(head if not what else f"{head}\n    what to do: {what}")
    if not blocks:
        return ""
    heading = "Evidence (FAIL, ERROR: what is lacking and what to do; n/a: why):"
    return "\n".join(["", heading, *blocks])
