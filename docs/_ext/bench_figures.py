"""Figures in the prose come from the recorded benchmark files, never by hand.

``{bench}`[SOURCE/]OBJECT:FIELD[:UNIT][:FORMAT]``` reads a value from
``_generated/bench/`` when the pages are built and prints it:

SOURCE
    none: ``bench.json`` (``nox -s bench``); ``gpu/``: ``gpu/bench.json``
    (``tools/gpu_run.sh``); ``history/``: ``history.json`` (figures measured
    once, recorded by hand, that no run rewrites).
OBJECT
    ``bench.json``: a case (``is_gpu``) or ``machine``. ``gpu/bench.json``: a
    case, by its full name or its first word (``mlp`` for
    ``mlp 4096x1024x4096``), ``versions`` or ``allocation``.
    ``history.json``: a record.
FIELD
    a dotted path inside it (``ratio``, ``a.median``, ``b.samples.0``).
UNIT
    ``s``, ``ms``, ``us`` or ``ns`` for a time, converted from the unit the
    file records (the case's ``unit`` for ``a``/``b`` statistics, a
    ``_s``/``_ms``/``_us``/``_ns`` suffix in the path otherwise) and printed
    after a no-break space; without one a time gets the unit that reads best. ``x``
    prints a plain number followed by ``x``.
FORMAT
    a format specification starting with ``.`` (``.3f``); the default is three
    significant digits.

A list prints its items separated by commas, a string as it is. A figure does
not break across lines: a time and its unit, or the words of a text, are joined
by no-break spaces (in a table's cells a text may wrap). An unknown
source, object, field or unit, or a unit on a value that is not a time, is an
error at the role (a failed build under ``-W``).

``{bench-table} [SOURCE/]OBJECT`` renders a record's ``rows`` as a table, with
the record's ``columns``: ``[key, label]`` or ``[key, label, "UNIT:FORMAT"]``,
values formatted as above.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective, SphinxRole


FILES = {"": "bench.json", "gpu/": "gpu/bench.json", "history/": "history.json"}
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
NBSP = "\N{NO-BREAK SPACE}"  # a figure does not break across lines
_SUFFIX = re.compile(r"_(s|ms|us|ns)$")
_STATS = {"min", "median", "max", "samples"}


class BenchError(ValueError):
    """A reference that the recorded files cannot answer."""


def split_source(ref: str) -> tuple[str, str]:
    for prefix in sorted(FILES, key=len, reverse=True):
        if prefix and ref.startswith(prefix):
            return prefix, ref[len(prefix) :]
    if "/" in ref.split(":", 1)[0]:
        raise BenchError(
            f"unknown source in {ref!r}; known: {', '.join(p for p in FILES if p)} or none"
        )
    return "", ref


def objects(source: str, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The named objects a file holds, with their aliases."""
    if source == "":
        found = {"machine": data["machine"]}
        found.update({r["case"]: r for r in data["results"]})
        return found
    if source == "gpu/":
        found = {k: v for k, v in data.items() if k != "cases"}
        cases = data["cases"]
        found.update(cases)
        firsts = [name.split()[0] for name in cases]
        for name, first in zip(cases, firsts, strict=True):
            if firsts.count(first) == 1:
                found.setdefault(first, cases[name])
        return found
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def lookup(data: dict[str, Any], source: str, name: str, path: str) -> tuple[Any, str | None]:
    """The value at ``path`` in object ``name`` and the time unit it is recorded in."""
    known = objects(source, data)
    if name not in known:
        raise BenchError(f"no {name!r} in {FILES[source]}; known: {', '.join(sorted(known))}")
    value: Any = known[name]
    parts = path.split(".")
    unit = None
    for i, part in enumerate(parts):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            where = ".".join(parts[:i]) or name
            keys = ", ".join(map(str, value)) if isinstance(value, dict) else f"{len(value)} items"
            raise BenchError(
                f"{FILES[source]}: {where} has no {part!r}"
                + (f" (it has: {keys})" if isinstance(value, dict | list) else "")
            )
        if m := _SUFFIX.search(part):
            unit = m.group(1)
        elif part in _STATS and i == 1 and isinstance(known[name].get("unit"), str):
            unit = known[name]["unit"]
        elif source == "gpu/" and part == "rounds":
            unit = "ms"
    if unit is not None and unit not in TIME_UNITS:
        raise BenchError(f"{FILES[source]}: {name}.{path} has the unknown unit {unit!r}")
    return value, unit


def number(value: float, spec: str | None) -> str:
    if spec:
        return format(value, spec)
    if isinstance(value, int) or value == 0:
        return str(value)
    digits = 2 - math.floor(math.log10(abs(value)))
    if digits <= 0:
        return f"{round(value, digits):.0f}"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


def render(value: Any, unit: str | None, options: list[str], where: str, whole: bool = True) -> str:
    """``value`` as text; ``whole``: a text's spaces do not break (a figure in
    running text), where a table cell's description may wrap."""
    spec = next((o for o in options if o.startswith(".")), None)
    wanted = [o for o in options if not o.startswith(".")]
    if len(wanted) > 1:
        raise BenchError(f"{where}: more than one unit: {', '.join(wanted)}")
    target = wanted[0] if wanted else None
    if target is not None and target not in (*TIME_UNITS, "x"):
        raise BenchError(f"{where}: unknown unit {target!r}; known: s, ms, us, ns, x")
    if spec is not None:
        try:
            format(1.0, spec)
        except ValueError as e:
            raise BenchError(f"{where}: bad format {spec!r}: {e}") from None
    if isinstance(value, list):
        return ", ".join(render(v, unit, options, where, whole) for v in value)
    if isinstance(value, bool):
        if options:
            raise BenchError(f"{where} is a yes/no value; it takes no unit or format")
        return "yes" if value else "no"
    if isinstance(value, str):
        if options:
            raise BenchError(f"{where} is text ({value!r}); it takes no unit or format")
        return value.replace(" ", NBSP) if whole else value
    if not isinstance(value, int | float):
        raise BenchError(
            f"{where} is not a figure (a {type(value).__name__}); name a field inside it"
        )
    if unit is None:
        if target in TIME_UNITS:
            raise BenchError(f"{where} is not a time; it cannot be shown in {target}")
        return number(value, spec) + ("x" if target == "x" else "")
    if target == "x":
        raise BenchError(f"{where} is a time ({unit}); 'x' is for ratios")
    seconds = value * TIME_UNITS[unit]
    if target is None:  # the unit that reads best
        target = next((u for u in ("s", "ms", "us") if abs(seconds) >= TIME_UNITS[u]), "ns")
    return f"{number(seconds / TIME_UNITS[target], spec)}{NBSP}{target}"


def figure(folder: Path, ref: str) -> tuple[str, Path]:
    """The text for ``ref`` and the file it came from."""
    source, rest = split_source(ref.strip())
    parts = rest.split(":")
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise BenchError(
            f"{ref!r}: write [gpu/|history/]OBJECT:FIELD[:UNIT][:FORMAT], e.g. is_gpu:a.median:ns"
        )
    name, path, *options = parts
    file = folder / FILES[source]
    if not file.exists():
        raise BenchError(f"{file} does not exist")
    data = json.loads(file.read_text(encoding="utf-8"))
    value, unit = lookup(data, source, name, path)
    return render(value, unit, options, f"{FILES[source]}: {name}.{path}"), file


def table_markdown(folder: Path, ref: str) -> tuple[str, Path]:
    source, name = split_source(ref.strip())
    file = folder / FILES[source]
    if not file.exists():
        raise BenchError(f"{file} does not exist")
    data = json.loads(file.read_text(encoding="utf-8"))
    record, _ = lookup(data, source, name, "rows")
    columns, _ = lookup(data, source, name, "columns")
    lines = [
        "| " + " | ".join(column[1] for column in columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for i in range(len(record)):
        cells = []
        for key, _, *options in columns:
            value, unit = lookup(data, source, name, f"rows.{i}.{key}")
            where = f"{FILES[source]}: {name}.rows.{i}.{key}"
            opts = [o for item in options for o in item.split(":")]
            cells.append(render(value, unit, opts, where, whole=False))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n", file


def _folder(env: Any) -> Path:
    return Path(env.srcdir) / "_generated" / "bench"


class BenchRole(SphinxRole):
    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        try:
            text, file = figure(_folder(self.env), self.text)
        except BenchError as e:
            msg = self.inliner.reporter.error(f"bench: {e}", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        self.env.note_dependency(str(file))
        return [nodes.inline(text, text, classes=["bench-figure"])], []


class BenchTable(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        try:
            text, file = table_markdown(_folder(self.env), self.arguments[0])
        except BenchError as e:
            raise self.error(f"bench-table: {e}") from None
        self.env.note_dependency(str(file))
        return self.parse_text_to_nodes(text)


def setup(app: Sphinx) -> dict[str, object]:
    app.add_role("bench", BenchRole())
    app.add_directive("bench-table", BenchTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
