"""The execution plan of a submission: which code runs, in what order, and where each task ends
(docs/how-grading-works.md, step 1). Self-check cells never run: the grading kernel cannot import the harness."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import nbformat

SELF_CHECK_MODULE = "autograder.self_check"  # what the self-check cells import
EARLIER_MODULE = "autograder.notebook"  # the same module, as notebooks assigned before the rename import it
SELF_CHECK_MODULES = (SELF_CHECK_MODULE, EARLIER_MODULE)
CHECK_FUNCTIONS = tuple(f"{module}.check" for module in SELF_CHECK_MODULES)


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
        if isinstance(statement, ast.Import | ast.ImportFrom):
            prefix = "" if isinstance(statement, ast.Import) else f"{statement.module}."
            for alias in statement.names:  # what it imports, by its full name, and the name it binds
                imported = prefix + alias.name
                if imported in SELF_CHECK_MODULES and (alias.asname or prefix):
                    modules.add(alias.asname or alias.name)
                elif imported in CHECK_FUNCTIONS and prefix:
                    functions.add(alias.asname or alias.name)
                else:
                    return False
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


@dataclass(frozen=True)
class RunCell:
    """``origin`` is 'lab' (locked, template version) or 'student'."""

    source: str
    origin: str
    task: str | None
    cell_number: int | None  # 1-based position in the submission, None for a restored cell
    label: str


@dataclass(frozen=True)
class CaptureTask:
    task: str


@dataclass(frozen=True)
class Plan:
    steps: tuple[RunCell | CaptureTask, ...]
    changes: tuple[str, ...]  # locked cells the submission edited or deleted, in words


def _normalized(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _is_answer(cell) -> bool:
    return bool(cell.metadata.get("autograder", {}).get("answer"))


def _match(template: nbformat.NotebookNode, submission: nbformat.NotebookNode) -> list[int | None]:
    """Each submission cell's template cell (by cell id, else by identical locked source)."""
    by_id = {cell.get("id"): i for i, cell in enumerate(template.cells) if cell.get("id")}
    by_source: dict[tuple[str, str], int] = {}
    for i, cell in enumerate(template.cells):
        if not _is_answer(cell):
            by_source.setdefault((cell.cell_type, _normalized(cell.source)), i)
    taken, matches = set(), []
    for cell in submission.cells:
        index = by_id.get(cell.get("id"))
        if index is None or index in taken or template.cells[index].cell_type != cell.cell_type:
            index = by_source.get((cell.cell_type, _normalized(cell.source)))
        if index in taken:
            index = None
        if index is not None:
            taken.add(index)
        matches.append(index)
    return matches


def build_plan(template: nbformat.NotebookNode, submission: nbformat.NotebookNode) -> Plan:
    matches = _match(template, submission)
    matched_cell = {t: s for s, t in enumerate(matches) if t is not None}
    followers: dict[int, list[int]] = {}
    anchor = -1
    for cell_index, t in enumerate(matches):
        if t is None:
            followers.setdefault(anchor, []).append(cell_index)
        else:
            anchor = t
    tasks = [tcell.metadata.get("autograder", {}).get("task") for tcell in template.cells]
    region_end = {task: t for t, task in enumerate(tasks) if task is not None}
    changes: list[str] = []
    steps: list[RunCell | CaptureTask] = []

    def skip_self_check_cell(s: int) -> bool:
        """Code added to a self-check cell is reported as not run."""
        cell, t = submission.cells[s], matches[s]
        if is_self_check_code(cell.source):
            return True
        if not (is_self_check_cell(cell) or (t is not None and is_self_check_cell(template.cells[t]))):
            return False
        if has_code(cell.source):
            changes.append(
                f"cell {s + 1} is a check cell holding other code: check cells are not run when "
                "grading, so that code was not run"
            )
        return True

    def add_student_cells(anchor_index: int, task: str | None) -> None:
        for s in followers.get(anchor_index, []):
            cell = submission.cells[s]
            if cell.cell_type == "code" and cell.source.strip() and not skip_self_check_cell(s):
                steps.append(RunCell(cell.source, "student", task, s + 1, f"cell {s + 1}"))

    add_student_cells(-1, None)
    for t, (tcell, task) in enumerate(zip(template.cells, tasks)):
        s = matched_cell.get(t)
        if tcell.cell_type == "code" and is_self_check_cell(tcell):
            if s is not None:
                skip_self_check_cell(s)
        elif tcell.cell_type == "code":
            if _is_answer(tcell):
                if s is not None:
                    steps.append(RunCell(submission.cells[s].source, "student", task, s + 1, f"cell {s + 1}"))
            else:
                label = f"cell {s + 1}" if s is not None else f"lab cell {t + 1} (restored)"
                if s is None:
                    changes.append(f"lab cell {t + 1} was deleted; the lab's version was run")
                elif _normalized(submission.cells[s].source) != _normalized(tcell.source):
                    changes.append(f"cell {s + 1} is a lab cell that was edited; the lab's version was run")
                steps.append(RunCell(tcell.source, "lab", task, None if s is None else s + 1, label))
        add_student_cells(t, task)
        if task is not None and region_end[task] == t:
            steps.append(CaptureTask(task))
    return Plan(_without_idle_tail(steps), tuple(changes))


def has_code(source: str) -> bool:
    return any(line.strip() and not line.strip().startswith("#") for line in source.splitlines())


def _without_idle_tail(steps: list[RunCell | CaptureTask]) -> tuple[RunCell | CaptureTask, ...]:
    """Drop the lab's cells after the student's last line of code: they cannot earn a point, since every
    graded name is bound by the student, and skipping them makes unfinished notebooks quick to grade."""
    last = max(
        (i for i, s in enumerate(steps) if isinstance(s, RunCell) and s.origin == "student" and has_code(s.source)),
        default=-1,
    )
    return tuple(s for i, s in enumerate(steps) if i <= last or isinstance(s, CaptureTask))
