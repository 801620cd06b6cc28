"""``autograder assign``: the student notebooks under ``assignments/`` from the solutions under ``solutions/``.

Deterministic: answers become ``### Your code here``, outputs are cleared, marker cells are dropped,
and every other cell is the solution's, byte for byte. Each cell is tagged with its task and whether
it is an answer cell, which is how grading finds task boundaries in a submission. After each task comes
a self-check cell, and after the first cell, one that explains the self-check; both are tagged
``"check": true``, by which grading knows them and never runs them (``run/plan.py``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.authoring import markers
from autograder.run import SELF_CHECK_MODULE


@dataclass(frozen=True)
class AssignOutcome:
    lab: str
    path: Path
    changed: bool


def student_notebook(solution: nbformat.NotebookNode, lab_id: str) -> nbformat.NotebookNode:
    """The student version of a solution notebook."""
    questions = markers.parse_questions(solution)
    task_of = {i: q.task for q in questions for i in range(q.first_cell, q.last_cell + 1)}
    last_cell_of = {q.last_cell: q.task for q in questions}
    student = copy.deepcopy(solution)
    student.cells = []
    for index, cell in enumerate(solution.cells):
        if not markers.is_marker_cell(cell):
            student.cells.append(_student_cell(cell, index, task_of))
        if index == 0:
            student.cells.append(new_intro_cell(lab_id))
        if index in last_cell_of:
            student.cells.append(new_self_check_cell(last_cell_of[index], lab_id))
    student.metadata["autograder"] = {"lab": lab_id, "tasks": [{"id": q.task, "points": q.points} for q in questions]}
    return student


def _student_cell(cell, index: int, task_of: dict[int, str]):
    cell = copy.deepcopy(cell)
    cell.setdefault("id", f"cell-{index:03d}")
    answer = False
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
        if markers.has_solution(cell.source):
            if index not in task_of:
                raise markers.MarkerError(f"cell {index} has solution markers outside a question")
            cell.source, answer = markers.strip_solution(cell.source), True
    cell.metadata["autograder"] = {"task": task_of.get(index), "answer": answer}
    return cell


def new_intro_cell(lab_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(
        f"""### Checking your work as you go

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
    )
    return _check_cell(cell, "how-to-check", None)


def new_self_check_cell(task: str, lab_id: str) -> nbformat.NotebookNode:
    source = (
        f"# Check task {task} (public checks; this cell is not run when grading)\n"
        f"import {SELF_CHECK_MODULE} as ag\n"
        f'ag.check("{task}", lab="{lab_id}")'
    )
    return _check_cell(nbformat.v4.new_code_cell(source), f"check-{task}", task)


def _check_cell(cell: nbformat.NotebookNode, cell_id: str, task: str | None) -> nbformat.NotebookNode:
    cell.id = cell_id
    cell.metadata["autograder"] = {"task": task, "answer": False, "check": True}
    return cell


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def assign_lab(
    solution_path: Path, assignment_path: Path, lab_id: str, compare_only: bool = False, *, check: bool | None = None
) -> AssignOutcome:
    """Write (or with ``compare_only``, only compare) the student notebook of one lab. ``check`` is the
    earlier name of ``compare_only``, kept for scripts written before."""
    if check is not None:
        compare_only = check
    text = render(student_notebook(markers.read_solution(solution_path), lab_id))
    current = assignment_path.read_text(encoding="utf-8") if assignment_path.exists() else None
    changed = current != text
    if changed and not compare_only:
        assignment_path.parent.mkdir(parents=True, exist_ok=True)
        assignment_path.write_text(text, encoding="utf-8")
    return AssignOutcome(lab_id, assignment_path, changed)
