"""Building submissions for tests: the lab's student notebook with some answer cells filled in."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from autograder.lab import Lab

SOLUTION = "SOLUTION"


def answer_cells(nb) -> dict[str, list[int]]:
    """For each task, the indices of its answer cells, in order."""
    cells: dict[str, list[int]] = {}
    for index, cell in enumerate(nb.cells):
        meta = cell.metadata.get("autograder", {})
        if meta.get("answer"):
            cells.setdefault(meta["task"], []).append(index)
    return cells


def solution_answers(lab: Lab) -> dict[str, list[str]]:
    """The solution's answer cells per task, found by cell id in the solution notebook."""
    solution = nbformat.read(lab.solution_path, as_version=4)
    by_id = {cell.get("id"): cell.source for cell in solution.cells}
    return {
        task: [by_id[lab.template.cells[i].id] for i in indices] for task, indices in answer_cells(lab.template).items()
    }


def make_submission(lab: Lab, answers: dict[str, str | list[str]], path: Path) -> Path:
    """The student notebook with ``answers[task]`` in the task's answer cells (``SOLUTION``: the solution's).

    A string fills the task's first answer cell and leaves the others as they are; a list fills them in order.
    """
    nb = copy.deepcopy(lab.template)
    cells = answer_cells(nb)
    solved = solution_answers(lab)
    for task, answer in answers.items():
        sources = solved[task] if answer == SOLUTION else ([answer] if isinstance(answer, str) else answer)
        for index, source in zip(cells[task], sources):
            nb.cells[index].source = source
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
