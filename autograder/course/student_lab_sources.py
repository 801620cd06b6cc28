"""A lab's graders and reference as the students get them: reduced by their syntax trees.

``test_<lab>.py`` keeps its public checks whose references the students get, and the helpers only those
use; ``reference.py`` keeps its constants, its ``@shareable`` functions, and, for the other references a
public check calls without arguments, their stored results. What is withheld never reaches the text.
"""

from __future__ import annotations

import ast
import inspect

REFERENCE_ALIAS = "ref"


class StudentPackageError(RuntimeError):
    """The students' package cannot be built as asked."""


def _is_hidden(node: ast.FunctionDef) -> bool:
    return any(ast.unparse(d) in ("hidden", "pytest.mark.hidden") for d in node.decorator_list)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def reference_uses(node: ast.AST) -> set[str]:
    """The reference's names ``node`` reads: as ``ref.NAME``, or imported from a ``reference`` module."""
    return {
        n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == REFERENCE_ALIAS
    } | {
        alias.name
        for n in ast.walk(node)
        if isinstance(n, ast.ImportFrom) and (n.module or "").endswith(".reference")
        for alias in n.names
    }


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    return {
        n.id
        for t in getattr(node, "targets", [getattr(node, "target", None)])
        if t is not None
        for n in ast.walk(t)
        if isinstance(n, ast.Name)
    }


def _without_unused_bindings(body: list[ast.stmt], used: set[str]) -> list[ast.stmt]:
    """``body`` without the assignments and classes nothing in it or ``used`` reads (a hidden check's tolerance)."""
    bindings = (ast.Assign, ast.AnnAssign, ast.ClassDef)
    while True:
        read = set(used)
        for node in body:
            read |= _names(node) - _defined(node) if isinstance(node, bindings) else _names(node)
        kept = [
            _unused_left_out(n, read)
            for n in body
            if not isinstance(n, bindings) or not _defined(n) or _defined(n) & read
        ]
        if [ast.dump(n) for n in kept] == [ast.dump(n) for n in body]:
            return kept
        body = kept


def _unused_left_out(node: ast.stmt, read: set[str]) -> ast.stmt:
    """``a, b, c = x, y, z`` without the pairs whose name is not ``read``; any other statement as it is."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Tuple)
        and isinstance(node.value, ast.Tuple)
        and len(node.targets[0].elts) == len(node.value.elts)
        and all(isinstance(t, ast.Name) for t in node.targets[0].elts)
    ):
        return node
    pairs = [(t, v) for t, v in zip(node.targets[0].elts, node.value.elts) if isinstance(t, ast.Name) and t.id in read]
    if len(pairs) == len(node.value.elts) or not pairs:
        return node
    targets, values = zip(*pairs)
    return ast.Assign([ast.Tuple(list(targets), ast.Store())], ast.Tuple(list(values), ast.Load()), lineno=node.lineno)


def _statements(source: str) -> list[ast.stmt]:
    """The module's top-level statements, less its string expressions (docstrings)."""
    return [
        n
        for n in ast.parse(source).body
        if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))
    ]


def public_graders(source: str, available: set[str], docstring: str) -> tuple[str, set[str]]:
    """A lab's graders with only the public checks whose references are ``available``; the names they use."""
    body = _statements(source)
    functions = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
    dropped = {name for name, n in functions.items() if _is_hidden(n) or reference_uses(n) - available}
    while True:  # a check that calls a dropped helper goes; a helper that no kept code calls goes
        kept = [n for n in body if not (isinstance(n, ast.FunctionDef) and n.name in dropped)]
        more = {
            name
            for name, n in functions.items()
            if name not in dropped
            and (
                _names(n) & dropped or (name.startswith("_") and not any(name in _names(k) for k in kept if k is not n))
            )
        }
        if not more:
            break
        dropped |= more
    kept = _without_unused_bindings(
        [n for n in body if not (isinstance(n, ast.FunctionDef) and n.name in dropped)], set()
    )
    module = ast.Module([ast.Expr(ast.Constant(docstring)), *kept], type_ignores=[])
    return ast.unparse(module) + "\n", set().union(*(reference_uses(n) for n in kept))


def reference_parts(module) -> tuple[set[str], set[str]]:
    """A reference module's (shareable functions, functions without arguments whose results may be stored)."""
    from autograder.caches import CachedReference, is_shareable

    shared, stored = set(), set()
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__ or not callable(value) or isinstance(value, type):
            continue
        if is_shareable(value):
            shared.add(name)
        elif isinstance(value, CachedReference) and not inspect.signature(value.function).parameters:
            stored.add(name)
    return shared, stored


def students_reference(
    source: str, shared: set[str], stored: set[str], docstring: str, used: set[str] | None = None
) -> str:
    """``reference.py`` without what uses a withheld function, ``stored`` ones as their stored results and,
    with ``used``, only the constants and classes those names need."""
    body = _statements(source)
    functions = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    withheld = functions - shared
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in shared:
                if _names(node) & withheld:
                    raise StudentPackageError(
                        f"the @shareable reference {node.name} uses "
                        f"{', '.join(sorted(_names(node) & withheld))}, which are not shareable"
                    )
                out.append(node)
            elif node.name in stored:
                out.append(ast.parse(f"{node.name} = StoredResult(__file__, {node.name!r})").body[0])
        elif isinstance(node, (ast.Import, ast.ImportFrom)) or not (_names(node) & withheld):
            out.append(node)
        else:
            withheld |= _defined(node)
    if stored:  # after the __future__ imports
        future = sum(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in out)
        out.insert(future, ast.parse("from autograder.caches import StoredResult").body[0])
    if used is not None:
        out = _without_unused_bindings(out, used)
    return ast.unparse(ast.Module([ast.Expr(ast.Constant(docstring)), *out], type_ignores=[])) + "\n"


def constant_names(source: str) -> set[str]:
    """Names a module binds other than by ``def``: its constants and classes."""
    return set().union(
        *(
            _defined(n)
            for n in ast.parse(source).body
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom))
        )
    )
