"""Known-grade cases graded several to a notebook, so that a lab's tests execute a third as many notebooks.

Each task is checked on facts taken right after its own cells, so cases that answer different tasks (or a
task alike, to the same expected score) can share a notebook, each judged on its own tasks. A case that
times code of its own is its group's only one, in the group that runs furthest into the lab anyway.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder.authoring.known_grades import SOLUTION, Case, make_submission
from autograder.lab import Lab
from autograder.run import Limits


@dataclass(frozen=True)
class CaseGroup:
    """Cases graded in one notebook, named after its first case."""

    cases: tuple[Case, ...]

    @property
    def name(self) -> str:
        return self.cases[0].name if len(self.cases) == 1 else f"{self.cases[0].name}+{len(self.cases) - 1}"

    @property
    def answers(self) -> dict:
        """task -> answer: every case's answers (shared tasks are answered alike)."""
        return {task: answer for case in self.cases for task, answer in case.answers.items()}

    @property
    def cell_timeout(self) -> float:
        return self.cases[0].cell_timeout

    def tasks_of_others(self, case: Case) -> frozenset[str]:
        """The tasks the group's other cases touch and ``case`` does not: theirs to judge."""
        mine = _tasks(case)
        return frozenset(task for other in self.cases if other is not case for task in _tasks(other) - mine)

    def describe(self, case: Case) -> str:
        """Which cases ``case`` was graded with, for a failure's message."""
        others = [other.name for other in self.cases if other is not case]
        if not others:
            return ""
        return (
            f"graded in one notebook with {', '.join(others)} (autograder/authoring/case_groups.py); an "
            "answer of theirs that changes this case's tasks needs `alone=True` on its Case"
        )


def grouped(cases: list[Case], timed: Collection[str] = (), order: Sequence[str] = ()) -> list[CaseGroup]:
    """The cases in groups that can share a notebook: each joins the first group it fits; one that times code
    of its own (in a task of ``timed``) then joins the fitting group that runs furthest along ``order``."""
    groups: list[list[Case]] = []
    for case in sorted(cases, key=lambda case: _times_code(case, timed)):  # those that time code last
        timing = _times_code(case, timed)
        fitting = [m for m in groups if _joins(case, m) and not (timing and any(_times_code(o, timed) for o in m))]
        if not fitting:
            groups.append([case])
        elif timing:
            max(fitting, key=lambda members: _reach(members, order)).append(case)
        else:
            fitting[0].append(case)
    position = {case.name: index for index, case in enumerate(cases)}
    groups.sort(key=lambda members: position[members[0].name])
    return [CaseGroup(tuple(sorted(members, key=lambda case: position[case.name]))) for members in groups]


def grading_jobs(
    lab: Lab, groups: Iterable[CaseGroup], folder: Path, with_reference: bool = True
) -> dict[str, tuple[Path, Limits]]:
    """name -> (notebook, limits) of a lab's test gradings, longest first so that a few processes stay busy to
    the end; the untouched notebook last (graded early, it would compute the references beside the solution)."""
    jobs = {"solution": (lab.solution_path, Limits())} if with_reference else {}
    for group in longest_first(lab, groups):
        path = make_submission(lab, group.answers, folder / f"{group.name}.ipynb")
        jobs[group.name] = (path, Limits(cell_timeout=group.cell_timeout))
    if with_reference:
        jobs["untouched"] = (lab.assignment_path, Limits())
    return jobs


def longest_first(lab: Lab, groups: Iterable[CaseGroup]) -> list[CaseGroup]:
    """The groups, those whose notebook runs furthest into the lab first (grading stops after the last answer)."""
    order = task_order(lab)
    return sorted(groups, key=lambda group: _reach(list(group.cases), order), reverse=True)


def _joins(case: Case, members: list[Case]) -> bool:
    return _shares(case) and _shares(members[0]) and all(_fit(case, other) for other in members)


def _shares(case: Case) -> bool:
    return not case.alone and case.status == "graded" and case.cell_timeout == Limits().cell_timeout


def _times_code(case: Case, timed: Collection[str]) -> bool:
    return any(case.answers.get(task, SOLUTION) != SOLUTION for task in timed)


def _reach(members: list[Case], order: Sequence[str]) -> int:
    return max((order.index(task) for case in members for task in case.answers if task in order), default=-1)


def task_order(lab: Lab) -> list[str]:
    return [task.id for task in lab.tasks]


def timed_tasks(lab: Lab) -> frozenset[str]:
    return frozenset(task for task, capture in lab.captures.items() if capture.times_code)


def _tasks(case: Case) -> set[str]:
    return set(case.answers) | set(case.scores)


def _fit(case: Case, other: Case) -> bool:
    return all(
        case.answers.get(task) == other.answers.get(task) and case.scores.get(task) == other.scores.get(task)
        for task in _tasks(case) & _tasks(other)
    )
