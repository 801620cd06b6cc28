"""The self-check cells: what ``assign`` adds to a student notebook for the student's self-check, and how
grading recognises them (it never runs them: the grading kernel cannot import the harness, and must not).

After each task comes a code cell ``ag.check("tN", lab=...)`` and, near the top, a markdown cell that
explains it. Both are tagged ``{"autograder": {"check": true, ...}}`` in their metadata (the tag, the
cells' ids and their text are what notebooks handed out already carry: they stay as they are).
"""

from __future__ import annotations

import ast

import nbformat

MODULE = "autograder.self_check"
EARLIER_MODULE = "autograder.notebook"  # the same module, as notebooks assigned before the rename import it
SELF_CHECK_MODULES = (MODULE, EARLIER_MODULE)


def intro_markdown(lab_id: str) -> str:
    return f"""### Checking your work as you go

After each task there is a cell like

```python
import autograder.self_check as ag
ag.check("t1", lab="{lab_id}")
```

Run it once you have done the task: within seconds it shows the task's points from its public checks,
what each check found and, for a layout, the expected and the found blocks side by side. The checks are
the ones grading runs, on fresh inputs, in a separate process; grading runs them again and may run
further checks. Before a task is done it says "not attempted". `ag.check()` checks every task at once.
These cells are not run when your notebook is graded, so nothing you write in them counts.

They need two things in this notebook's kernel, both named in the notebook's first code cell:

* the grading harness, the `autograder` package: if the cell fails with
  `ModuleNotFoundError: No module named 'autograder'`, install it into this kernel's environment with
  the `%pip install` command of the first code cell (the wheel or address your course gives), then
  restart the kernel;
* 8 CPU devices: the first code cell sets them before JAX starts; run it first, in a fresh kernel."""


def self_check_source(task: str, lab_id: str) -> str:
    return (
        f"# Check task {task} (public checks; this cell is not run when grading)\n"
        f"import {MODULE} as ag\n"
        f'ag.check("{task}", lab="{lab_id}")'
    )


def new_intro_cell(lab_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(intro_markdown(lab_id))
    cell.id = "how-to-check"
    cell.metadata["autograder"] = {"task": None, "answer": False, "check": True}
    return cell


def new_self_check_cell(task: str, lab_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(self_check_source(task, lab_id))
    cell.id = f"check-{task}"
    cell.metadata["autograder"] = {"task": task, "answer": False, "check": True}
    return cell


def is_self_check_cell(cell) -> bool:
    """Whether a cell was added by ``assign`` for the self-check (by its tag, which copies of it keep)."""
    meta = cell.get("metadata", {}).get("autograder")
    return isinstance(meta, dict) and meta.get("check") is True


def is_self_check_code(source: str) -> bool:
    """Whether code does nothing but the self-check: imports of ``autograder.self_check`` (or its earlier
    name, ``autograder.notebook``) and calls of its ``check`` (as ``ag.check``, the name the self-check
    cells use, or under the name the same code imports it as)."""
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
