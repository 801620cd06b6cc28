"""Submissions with known grades, as a lab's tests state them (``tests/labs/<lab>_submissions.py``), and
the notebook made of each. Graders' API (docs/writing-a-lab.md): known-grade files import ``Case``, ``solved``."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.lab import Lab
from autograder.run import Limits

SOLUTION = "SOLUTION"  # an answer that is the solution's own cells


@dataclass(frozen=True)
class Case:
    name: str
    answers: dict  # task -> answer source(s), or SOLUTION; unanswered tasks stay blank
    # task -> expected points, leaving out the lab's MEASURED_VERDICTS; tasks not named score 0
    scores: dict
    status: str = "graded"
    cell_timeout: float = Limits().cell_timeout
    messages: dict = field(default_factory=dict)  # task -> text that a failing message must contain
    # graded in a notebook of its own, not with other cases (case_groups.py): its answer changes later tasks
    alone: bool = False


def solved(*tasks):
    """Answers: the solution's, for these tasks."""
    return {t: SOLUTION for t in tasks}


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
    """The student notebook with ``answers[task]`` in the task's answer cells (``SOLUTION``: the solution's):
    a string fills the first one, a list fills them in order."""
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
