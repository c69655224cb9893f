"""The public surface a slice adds to torch, compared across its bases.

A backend written against one base must run on every base with no alias, so
each slice's series must add the same public names with the same signatures
on every base. A series adapts to its base inside the patches; ``[backport]``
patches bring what upstream already has by the primary base, so what they add
is part of the base, not of the slice.

The surface of a module is read with :mod:`ast` from the patched sources: its
public functions and classes, the public methods and attributes of those
classes (enum members included), and each function's parameters with their
kind and default. Annotations are not compared: a base's spelling
(``Optional[int]`` or ``int | None``) is the base's.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..overlay import Overlay
from ..overlay.base import TorchBase
from ..overlay.patchfile import Patch
from ..overlay.roster import Roster
from ..overlay.slices import Slice, SliceError
from . import pristine


BACKPORT_PREFIX = "[backport]"


@dataclass(frozen=True)
class _Part:
    """Some of a slice's patches, applied as the slice would be."""

    name: str
    patches: tuple[Patch, ...]

    def series(self, base: TorchBase) -> list[Patch]:
        return list(self.patches)


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__init__"


def _parameters(args: ast.arguments) -> dict[str, str]:
    """Each parameter's kind and default, by name (``self``/``cls`` too: a
    method that loses them changes how it is called)."""
    found: dict[str, str] = {}
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = "positional-only" if index < len(args.posonlyargs) else "positional"
        found[arg.arg] = kind + ("" if default is None else f"={ast.unparse(default)}")
    if args.vararg:
        found[f"*{args.vararg.arg}"] = "var-positional"
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        found[arg.arg] = "keyword-only" + ("" if default is None else f"={ast.unparse(default)}")
    if args.kwarg:
        found[f"**{args.kwarg.arg}"] = "var-keyword"
    return found


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> dict[str, str]:
    decorators = sorted(ast.unparse(d) for d in node.decorator_list)
    kind = "function" + "".join(f" @{d}" for d in decorators if "." not in d or "setter" in d)
    entries = {qualname: kind}
    for name, value in _parameters(node.args).items():
        entries[f"{qualname}({name})"] = value
    return entries


def _targets(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def module_surface(source: str, module: str) -> dict[str, str]:
    """The public surface of one module's source, as ``{entry: description}``.

    Entries are ``module:qualname`` (a function, class or attribute) and
    ``module:qualname(parameter)`` (a parameter's kind and default).
    """
    surface: dict[str, str] = {}

    def scan(body: Sequence[ast.stmt], scope: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
                surface.update(_function(node, f"{module}:{scope}{node.name}"))
            elif isinstance(node, ast.ClassDef) and _public(node.name):
                surface[f"{module}:{scope}{node.name}"] = "class"
                scan(node.body, f"{scope}{node.name}.")
            else:
                for name in _targets(node):
                    if _public(name):
                        surface[f"{module}:{scope}{name}"] = "attribute"

    scan(ast.parse(source).body, "")
    return surface


def _module_name(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _surface(files: Mapping[str, object], paths: Sequence[str], site_dir: Path) -> dict[str, str]:
    """The surface of ``paths`` as ``files`` leave them (pristine where they
    do not change them; absent where no file is)."""
    surface: dict[str, str] = {}
    for path in paths:
        patched = files.get(path)
        if patched is not None:
            text = patched.text  # type: ignore[attr-defined]
        elif (site_dir / path).is_file():
            text = (site_dir / path).read_text(encoding="utf-8")
        else:
            continue
        surface.update(module_surface(text, _module_name(path)))
    return surface


def added_surface(stack: Sequence[Slice], base: TorchBase, torch_dir: Path) -> dict[str, str]:
    """What the last slice of ``stack`` adds to the public surface on ``base``
    (the slices before it applied, and its own ``[backport]`` patches).

    Raises:
        SliceError: a series does not apply.
    """
    *deps, target = stack
    before = dict(Overlay.build(deps, torch_dir).files)
    series = target.series(base)
    backports = tuple(p for p in series if p.subject.startswith(BACKPORT_PREFIX))
    own = tuple(p for p in series if p not in backports)
    # Overlay.build() checks a stack; these are parts of one slice's series.
    site_dir = torch_dir.parent
    before = Overlay._apply_slice(_Part(target.name, backports), base, site_dir, before)  # type: ignore[arg-type]
    after = Overlay._apply_slice(_Part(target.name, own), base, site_dir, before)  # type: ignore[arg-type]
    paths = sorted({d.path for p in own for d in p.files if d.path.startswith("torch/")})
    old, new = _surface(before, paths, site_dir), _surface(after, paths, site_dir)
    return {key: value for key, value in new.items() if old.get(key) != value}


def surface_differences(slices: Iterable[Slice], primary: TorchBase) -> list[str]:
    """One line per difference between what a slice adds on ``primary`` and
    on each other base it has a series for; empty when every base agrees.

    Raises:
        SliceError: a series does not apply.
    """
    slices = Roster(slices)
    bases = dict.fromkeys(b for s in slices for b in s.bases)
    added: dict[tuple[str, TorchBase], dict[str, str]] = {}
    for base in bases:
        torch_dir = pristine.sources_dir(base)
        ported = slices.on(base)
        for name in ported.names():
            added[name, base] = added_surface(ported.closure([name]), base, torch_dir)
    problems = []
    for s in slices:
        if (s.name, primary) not in added:
            continue
        reference = added[s.name, primary]
        for base in s.bases:
            if base == primary:
                continue
            other = added[s.name, base]
            where = f"{s.name} on {base.version}"
            for key in sorted(reference.keys() | other.keys()):
                want, got = reference.get(key), other.get(key)
                if want == got:
                    continue
                if got is None:
                    problems.append(f"{where}: lacks {key} ({want})")
                elif want is None:
                    problems.append(f"{where}: adds {key} ({got}), {primary.version} does not")
                else:
                    problems.append(f"{where}: {key} is {got}, on {primary.version} {want}")
    return problems


def check_surface(slices: Iterable[Slice], primary: TorchBase) -> list[str]:
    """:func:`surface_differences`, raising if a slice's surface differs.

    A follow-up PR's backport may have to add its functions to another module
    than on the primary base, where upstream moved the code it extends
    between releases: its differences are reported, not refused.

    Raises:
        SliceError: listing every difference of a slice.
    """
    slices = list(slices)
    problems = surface_differences(slices, primary)
    followups = {s.name for s in slices if s.followup_of}
    refused = [p for p in problems if p.split(" on ", 1)[0] not in followups]
    if refused:
        raise SliceError("the public surface differs between bases:\n" + "\n".join(refused))
    lines = [
        f"{s.name}: one public surface on {len(s.bases)} base(s)"
        for s in slices
        if not any(p.startswith(f"{s.name} on ") for p in problems)
    ]
    return lines + [f"follow-up, reported: {p}" for p in problems]
