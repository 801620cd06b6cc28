"""Known-grade cases graded several to a notebook: each case is judged on its own tasks, and a lab's tests
execute a third as many notebooks.

Each task is checked on facts taken right after its own cells, so cases that answer different tasks (or
a task alike, to the same expected score) can share one notebook, each judged on its tasks alone
(``grade_expectations.case_problems``). A case that expects another status than "graded", a cell timeout
of its own, or is marked ``alone`` (its answer changes what later tasks run on, or its timing rests on a
time near its margin) is graded alone. A case that times code of its own shares a notebook as the group's
one such case, in the group that runs furthest into the lab, which runs about as far anyway.
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
        """The tasks the other cases of the group answer or score and ``case`` does not: theirs to judge."""
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
    """The cases in groups that can share a notebook: each case joins the first group it fits, in the cases'
    order; a case that times code of its own (``timed``: the lab's tasks that time code,
    ``TaskCapture.times_code``) then joins, of the groups it fits that hold no such case, the one that runs
    furthest into the lab (``order``: the lab's task ids in order)."""
    groups: list[list[Case]] = []
    timing = [case for case in cases if _times_code(case, timed)]
    for case in (case for case in cases if not _times_code(case, timed)):
        first = next((members for members in groups if _joins(case, members)), None)
        if first is None:
            groups.append([case])
        else:
            first.append(case)
    for case in timing:
        fitting = [
            members
            for members in groups
            if _joins(case, members) and not any(_times_code(other, timed) for other in members)
        ]
        if fitting:
            max(fitting, key=lambda members: _reach(members, order)).append(case)
        else:
            groups.append([case])
    position = {case.name: index for index, case in enumerate(cases)}
    groups.sort(key=lambda members: position[members[0].name])
    return [CaseGroup(tuple(sorted(members, key=lambda case: position[case.name]))) for members in groups]


def grading_jobs(
    lab: Lab, groups: Iterable[CaseGroup], folder: Path, with_reference: bool = True
) -> dict[str, tuple[Path, Limits]]:
    """name -> (notebook, limits) of a lab's test gradings: each group's notebook, written in ``folder``,
    and with ``with_reference`` the solution and the untouched student notebook. In the order that keeps a
    few processes busy to the end: the solution first (the longest), the groups ``longest_first``, the
    untouched notebook last (it runs no cell: graded early, its checks would compute the lab's references
    beside the solution's)."""
    jobs = {"solution": (lab.solution_path, Limits())} if with_reference else {}
    for group in longest_first(lab, groups):
        path = make_submission(lab, group.answers, folder / f"{group.name}.ipynb")
        jobs[group.name] = (path, Limits(cell_timeout=group.cell_timeout))
    if with_reference:
        jobs["untouched"] = (lab.assignment_path, Limits())
    return jobs


def longest_first(lab: Lab, groups: Iterable[CaseGroup]) -> list[CaseGroup]:
    """The groups, those whose notebook runs furthest into the lab first (in their order otherwise): grading
    stops after the last answered task (run/plan.py), so graded in this order by a few processes, none is
    left alone with a long notebook at the end."""
    order = task_order(lab)
    return sorted(groups, key=lambda group: _reach(list(group.cases), order), reverse=True)


def _joins(case: Case, members: list[Case]) -> bool:
    """Whether ``case`` may join the group of ``members``: both may share a notebook, and it fits each."""
    return _shares(case) and _shares(members[0]) and all(_fit(case, other) for other in members)


def _shares(case: Case) -> bool:
    return not case.alone and case.status == "graded" and case.cell_timeout == Limits().cell_timeout


def _times_code(case: Case, timed: Collection[str]) -> bool:
    """Whether the case answers a task that times code with code of its own."""
    return any(case.answers.get(task, SOLUTION) != SOLUTION for task in timed)


def _reach(members: list[Case], order: Sequence[str]) -> int:
    """How far into the lab the cases' notebook runs: the position of its last answered task."""
    return max((order.index(task) for case in members for task in case.answers if task in order), default=-1)


def task_order(lab: Lab) -> list[str]:
    """The lab's task ids in the order its notebook runs them."""
    return [task.id for task in lab.tasks]


def timed_tasks(lab: Lab) -> frozenset[str]:
    """The lab's tasks whose cells time code."""
    return frozenset(task for task, capture in lab.captures.items() if capture.times_code)


def _tasks(case: Case) -> set[str]:
    return set(case.answers) | set(case.scores)


def _fit(case: Case, other: Case) -> bool:
    """Whatever task both touch, they answer alike and expect the same score of it."""
    return all(
        case.answers.get(task) == other.answers.get(task) and case.scores.get(task) == other.scores.get(task)
        for task in _tasks(case) & _tasks(other)
    )
