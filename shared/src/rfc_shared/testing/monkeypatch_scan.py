"""Find monkeypatches of torch's compile stack in a backend's Python source.

The RFCs promise that a backend compiles with zero monkeypatching. This scan
makes the promise checkable: it reads a package's source (never imports it)
and reports every assignment, ``setattr``/``delattr``, ``del`` or mutating
method call aimed at an object of ``torch._dynamo``, ``torch._inductor``,
``torch.utils._triton`` or ``torch._C``, and every write into Triton's backend
table ``triton.backends.backends``. Calling functions of those modules (the
public ``register_*`` entries) is not a patch.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


PROTECTED = (
    "torch._dynamo",
    "torch._inductor",
    "torch.utils._triton",
    "torch._C",
    "triton.backends.backends",
)

MUTATING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "update",
        "add",
        "discard",
        "remove",
        "pop",
        "popitem",
        "clear",
        "setdefault",
        "cache_clear",
        "__setitem__",
        "__delitem__",
        "__setattr__",
        "__delattr__",
    }
)


@dataclass(frozen=True)
class Finding:
    file: Path
    line: int
    target: str
    action: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.action} {self.target}"


def _is_protected(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in PROTECTED)


class _Scanner(ast.NodeVisitor):
    def __init__(self, file: Path) -> None:
        self.file = file
        self.aliases: dict[str, str] = {}
        self.findings: list[Finding] = []

    # Names bound by imports, so that `iu.GPU_TYPES` resolves to
    # `torch._inductor.utils.GPU_TYPES`.
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def _dotted(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while True:
            if isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Subscript):
                node = node.value
            elif isinstance(node, ast.Call) and _call_name(node) == "getattr" and node.args:
                # getattr(torch._inductor, "utils") reads an attribute
                if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                    parts.append(str(node.args[1].value))
                node = node.args[0]
            elif isinstance(node, ast.Name):
                base = self.aliases.get(node.id)
                if base is None:
                    return None
                return ".".join([base, *reversed(parts)])
            else:
                return None

    def _report(self, node: ast.AST, target: ast.AST, action: str) -> None:
        name = self._dotted(target)
        if name is not None and _is_protected(name):
            self.findings.append(Finding(self.file, node.lineno, name, action))

    def _targets(self, node: ast.AST, targets: Iterable[ast.AST], action: str) -> None:
        for target in targets:
            if isinstance(target, (ast.Tuple, ast.List)):
                self._targets(node, target.elts, action)
            elif isinstance(target, (ast.Attribute, ast.Subscript)):
                self._report(node, target, action)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node, node.targets, "assignment to")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets(node, [node.target], "augmented assignment to")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._targets(node, [node.target], "assignment to")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._targets(node, node.targets, "del of")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node)
        if name in ("setattr", "delattr") and node.args:
            self._report(node, node.args[0], f"{name} on")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING_METHODS:
            self._report(node, node.func.value, f"{node.func.attr}() on")
        self.generic_visit(node)


def _call_name(node: ast.Call) -> str | None:
    return node.func.id if isinstance(node.func, ast.Name) else None


def scan_source(source: str, file: Path) -> list[Finding]:
    scanner = _Scanner(file)
    scanner.visit(ast.parse(source, filename=str(file)))
    return scanner.findings


def scan_paths(paths: Iterable[Path]) -> Iterator[Finding]:
    """Every finding in the .py files under ``paths``."""
    for root in paths:
        files = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for file in files:
            yield from scan_source(file.read_text(encoding="utf-8"), file)
