"""How grading recognises the self-check cells ``assign`` adds (it never runs them: the grading kernel cannot
import the harness). They are known by their tag, ``{"autograder": {"check": true}}``, which handed-out
notebooks already carry, or by code that does nothing but the self-check."""

from __future__ import annotations

import ast

SELF_CHECK_MODULE = "autograder.self_check"  # what the self-check cells import
EARLIER_MODULE = "autograder.notebook"  # the same module, as notebooks assigned before the rename import it
SELF_CHECK_MODULES = (SELF_CHECK_MODULE, EARLIER_MODULE)


def is_self_check_cell(cell) -> bool:
    meta = cell.get("metadata", {}).get("autograder")
    return isinstance(meta, dict) and meta.get("check") is True


def is_self_check_code(source: str) -> bool:
    """Whether code does nothing but import the self-check module (by either name) and call its ``check``
    (as ``ag.check``, or under the name it imports it as)."""
    try:
        statements = ast.parse(source).body
    except (SyntaxError, ValueError):
        return False
    modules, functions = {"ag"}, set()
    for statement in statements:
        if isinstance(statement, ast.Import) and all(
            a.name in SELF_CHECK_MODULES and a.asname for a in statement.names
        ):
            modules |= {a.asname for a in statement.names if a.asname}
        elif (
            isinstance(statement, ast.ImportFrom)
            and statement.module == "autograder"
            and all(f"autograder.{a.name}" in SELF_CHECK_MODULES for a in statement.names)
        ):
            modules |= {a.asname or a.name for a in statement.names}
        elif (
            isinstance(statement, ast.ImportFrom)
            and statement.module in SELF_CHECK_MODULES
            and all(a.name == "check" for a in statement.names)
        ):
            functions |= {a.asname or a.name for a in statement.names}
        elif not (isinstance(statement, ast.Expr) and _is_self_check_call(statement.value, modules, functions)):
            return False
    return bool(statements)


def _is_self_check_call(node: ast.expr, modules: set[str], functions: set[str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    if isinstance(function, ast.Name):
        return function.id in functions
    return (
        isinstance(function, ast.Attribute)
        and function.attr == "check"
        and isinstance(function.value, ast.Name)
        and function.value.id in modules
    )
