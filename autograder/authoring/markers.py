"""The solution notebook's markers, in otter-grader's format: raw ``# BEGIN QUESTION`` (with ``name:`` and
``points:`` lines) and ``# END QUESTION`` cells around a task, ``# BEGIN SOLUTION`` and ``# END SOLUTION``
(or a ``# SOLUTION`` line suffix) around answer code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from unittest import mock

import nbformat

ANSWER_PROMPT = "### Your code here"
BEGIN_QUESTION = "# BEGIN QUESTION"
END_QUESTION = "# END QUESTION"
TASK_ID = re.compile(r"t[1-9][0-9]*")


class MarkerError(ValueError):
    """The solution notebook's markers are malformed; the message names the cell."""


@dataclass(frozen=True)
class Question:
    task: str
    points: float
    first_cell: int
    last_cell: int


def is_marker_cell(cell) -> bool:
    return cell.cell_type == "raw" and cell.source.strip().splitlines()[:1] in ([BEGIN_QUESTION], [END_QUESTION])


def parse_questions(nb) -> list[Question]:
    """The tasks of a solution notebook, in order, with the cells each region spans."""
    questions: list[Question] = []
    opened: tuple[dict[str, Any], int] | None = None  # the open question's config and its BEGIN cell
    for index, cell in enumerate(nb.cells):
        if not is_marker_cell(cell):
            continue
        lines = cell.source.strip().splitlines()
        if lines[0] == BEGIN_QUESTION:
            if opened is not None:
                raise MarkerError(f"cell {index}: BEGIN QUESTION inside question {opened[0].get('name')}")
            opened = _config(lines[1:], index), index
        else:
            if opened is None:
                raise MarkerError(f"cell {index}: END QUESTION without BEGIN QUESTION")
            config, begin = opened
            questions.append(Question(config["name"], config["points"], begin + 1, index - 1))
            opened = None
    if opened is not None:
        raise MarkerError(f"question {opened[0]['name']} has no END QUESTION")
    expected = [f"t{i}" for i in range(1, len(questions) + 1)]
    if [q.task for q in questions] != expected:
        raise MarkerError(f"task ids must be {expected} in order, found {[q.task for q in questions]}")
    return questions


def _config(lines: list[str], index: int) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for line in lines:
        key, sep, value = line.partition(":")
        if not sep:
            raise MarkerError(f"cell {index}: expected 'key: value', found {line!r}")
        config[key.strip()] = value.strip()
    if not TASK_ID.fullmatch(config.get("name", "")):
        raise MarkerError(f"cell {index}: a question needs 'name: tN', found {config.get('name')!r}")
    try:
        config["points"] = float(config["points"])
    except (KeyError, ValueError):
        raise MarkerError(f"cell {index}: question {config['name']} needs numeric 'points:'") from None
    return config


def strip_solution(source: str) -> str:
    """The student's version of a code cell: answer lines replaced by ``### Your code here``."""
    from otter.assign import solutions

    with mock.patch.object(solutions, "BLOCK_PROMPT", ANSWER_PROMPT):
        try:
            return "\n".join(solutions.replace_solutions(source.split("\n"), "python"))
        except AssertionError as exc:
            raise MarkerError(f"unbalanced solution markers: {exc}") from None


def has_solution(source: str) -> bool:
    return any(
        line.rstrip().endswith(("# BEGIN SOLUTION", "# SOLUTION", "# END SOLUTION"))
        or line.strip().startswith("# BEGIN SOLUTION")
        for line in source.split("\n")
    )


def read_solution(path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)
