"""Writes to torch and Triton objects in one module's source, found statically.

A name stands for a torch or Triton object when it resolves to a dotted name rooted
at ``torch`` or ``triton``: through imports (``import torch._inductor.utils as u``,
``from torch._inductor.utils import GPU_TYPES``), plain assignments
(``u = torch._inductor.utils``), ``getattr`` with a constant name and
``importlib.import_module`` of a constant module. Parameters and local definitions
shadow such names in their scope. A write to one is a patch: assignment,
augmented assignment or ``del`` of an attribute or item, ``setattr``/``delattr``,
a call of a mutating container method with that method's arity, and augmented
assignment to a name that stands for a torch object (``GPU_TYPES += ["x"]``).
Writes to the compile in progress and to statistics (``NOT_PATCHED``) are not.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path


ROOTS = frozenset({"torch", "triton"})

# Objects a backend's codegen writes the way Inductor's own does: the compile in progress
# (`V.graph`, `V.kernel`) and statistics. Writing them changes nothing torch does.
NOT_PATCHED = (
    "torch._inductor.virtualized.V",
    "torch._inductor.metrics",
    "torch._dynamo.utils.counters",
)

# Container methods that change their receiver, by the numbers of positional arguments
# they take: `torch.add(a, b)` and `ops.add(a, b)` are no `set.add(x)`.
_ARITIES = {
    "sort reverse popitem clear cache_clear": {0},
    "append extend remove add discard __delitem__ __delattr__": {1},
    "insert __setitem__ __setattr__": {2},
    "update": {0, 1},
    "setdefault": {1, 2},
    "pop": {0, 1, 2},
}
MUTATING_METHODS = {name: counts for names, counts in _ARITIES.items() for name in names.split()}

_ASSIGNMENT, _DELETION = "assignment to", "del of"
_AUGMENTED = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.BitOr: "|=", ast.BitAnd: "&="}


@dataclass(frozen=True)
class Finding:
    """One write to torch or Triton.

    Attributes:
        file: The source file.
        line: The line of the write.
        target: The dotted name written to, e.g. ``torch._inductor.utils.GPU_TYPES``.
        action: How it is written, e.g. ``.append() on``.
    """

    file: Path
    line: int
    target: str
    action: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.action} {self.target}"


class _Scanner(ast.NodeVisitor):
    """Walks one module, tracking which local names stand for torch or Triton objects."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.names: dict[str, str] = {}  # local name -> dotted name rooted at torch or triton
        self.findings: list[Finding] = []

    def resolve(self, node: ast.expr) -> str | None:
        """The dotted torch or Triton name ``node`` evaluates to, if it can be told statically."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return base and f"{base}.{node.attr}"
        if isinstance(node, ast.Subscript):
            base = self.resolve(node.value)
            return base and f"{base}[{ast.unparse(node.slice)}]"
        if isinstance(node, ast.Call) and _callee(node) == "getattr" and len(node.args) >= 2:
            base, attr = self.resolve(node.args[0]), _constant(node.args[1])
            return base and attr and f"{base}.{attr}"
        if isinstance(node, ast.Call) and _callee(node) == "import_module" and node.args:
            module = _constant(node.args[0])
            return module if module and module.partition(".")[0] in ROOTS else None
        return None

    def bind(self, name: str, dotted: str | None) -> None:
        if dotted and dotted.partition(".")[0] in ROOTS:
            self.names[name] = dotted
        else:
            self.names.pop(name, None)

    def report(self, node: ast.stmt | ast.expr, target: str | None, action: str) -> None:
        if target and not any(_within(target, name) for name in NOT_PATCHED):
            self.findings.append(Finding(self.file, node.lineno, target, action))

    def report_write(self, node: ast.stmt, target: ast.expr, action: str) -> None:
        """Reports ``target`` if writing it patches (``action``: ``assignment to``, ...)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.report_write(node, element, action)
        elif isinstance(target, ast.Starred):
            self.report_write(node, target.value, action)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            self.report(node, self.resolve(target), action)
        elif isinstance(target, ast.Name) and action not in (_ASSIGNMENT, _DELETION):
            # `GPU_TYPES += [...]` extends torch's list; `GPU_TYPES = [...]` rebinds a local.
            self.report(node, self.resolve(target), action)

    # Bindings

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.bind(alias.asname, alias.name)
            else:  # `import torch._inductor.utils` binds `torch`
                root = alias.name.partition(".")[0]
                self.bind(root, root)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name != "*":
                module = node.module if not node.level else None
                self.bind(alias.asname or alias.name, module and f"{module}.{alias.name}")

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):  # a for, with or del target: no longer torch's
            self.names.pop(node.id, None)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for child in (*node.decorator_list, node.args, node.returns):
            if child is not None:
                self.visit(child)
        self.visit_scope(node.body, _parameters(node.args))
        self.names.pop(node.name, None)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self.visit_scope([node.body], _parameters(node.args))

    def visit_arguments(self, node: ast.arguments) -> None:
        for default in (*node.defaults, *node.kw_defaults):
            if default is not None:
                self.visit(default)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for child in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(child)
        self.visit_scope(node.body, ())
        self.names.pop(node.name, None)

    def visit_scope(self, body: Sequence[ast.AST], local: Iterable[str]) -> None:
        """Visits a function's or class's body with the names it shadows unbound."""
        outer, shadowed = self.names, set(local)
        self.names = {name: dotted for name, dotted in outer.items() if name not in shadowed}
        for child in body:
            self.visit(child)
        self.names = outer

    # Writes

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        value = self.resolve(node.value)
        for target in node.targets:
            self.report_write(node, target, _ASSIGNMENT)
            self.visit(target)
            if isinstance(target, ast.Name):  # `u = torch._inductor.utils` makes `u` torch's
                self.bind(target.id, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.report_write(node, node.target, _ASSIGNMENT)
            self.visit(node.target)
            if isinstance(node.target, ast.Name):
                self.bind(node.target.id, self.resolve(node.value))

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.bind(node.target.id, self.resolve(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        operator = _AUGMENTED.get(type(node.op), "augmented assignment")
        self.report_write(node, node.target, f"{operator} on")
        if not isinstance(node.target, ast.Name):
            self.visit(node.target)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self.report_write(node, target, _DELETION)
            self.visit(target)

    def visit_Call(self, node: ast.Call) -> None:
        func, args = node.func, node.args
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and len(args) >= 2:
            obj, attr = self.resolve(args[0]), _constant(args[1])
            self.report(node, obj and (f"{obj}.{attr}" if attr else obj), f"{func.id}() on")
        elif isinstance(func, ast.Attribute) and len(args) in MUTATING_METHODS.get(func.attr, ()):
            self.report(node, self.resolve(func.value), f".{func.attr}() on")
        self.generic_visit(node)


def _within(name: str, prefix: str) -> bool:
    """Whether ``name`` is ``prefix`` or one of its attributes or items."""
    return name == prefix or name.startswith((f"{prefix}.", f"{prefix}["))


def _callee(call: ast.Call) -> str | None:
    """The called function's own name: ``f`` for ``f()`` and for ``m.f()``."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _constant(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _parameters(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {arg.arg for arg in every if arg is not None}


def scan_source(source: str, file: Path) -> list[Finding]:
    """The monkeypatches in one module's source.

    Args:
        source: The module's Python source.
        file: The name findings carry.

    Returns:
        The findings, in source order.

    Raises:
        SyntaxError: ``source`` is not Python.
    """
    scanner = _Scanner(file)
    scanner.visit(ast.parse(source, filename=str(file)))
    return sorted(scanner.findings, key=lambda finding: finding.line)
