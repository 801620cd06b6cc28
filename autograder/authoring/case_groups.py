"""Known-grade cases graded several to a notebook: each case is judged on its own tasks, and a lab's tests
execute a third as many notebooks.

A case answers a few tasks and leaves the rest blank, and each task is checked on facts taken right
after its own cells; so cases that answer different tasks (or a task alike, to the same expected score)
can share one notebook, each case judged on its tasks alone (``grade_expectations.case_problems``, given
the tasks of the others). A case that expects another status than "graded" or a cell timeout of its own
is graded alone, and so is one that answers a task that times code with code of its own (a time depends
on what ran before it: a dispatch-only timing measured after other cases' answers once took long enough
to pass), and one marked ``alone``: an answer that changes what later tasks run on (a global setting left
changed, a name another task reads rebound) is graded alone, or it would be judged on another case's
answer.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
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


def grouped(cases: list[Case], timed: Collection[str] = ()) -> list[CaseGroup]:
    """The cases in groups that can share a notebook, in the cases' order: each case joins the first group
    it fits. ``timed``: the lab's tasks that time code (``TaskCapture.times_code``)."""
    groups: list[list[Case]] = []
    for case in cases:
        if _shares(case, timed):
            for members in groups:
                if _shares(members[0], timed) and all(_fit(case, other) for other in members):
                    members.append(case)
                    break
            else:
                groups.append([case])
        else:
            groups.append([case])
    return [CaseGroup(tuple(members)) for members in groups]


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
    order = [task.id for task in lab.tasks]

    def reach(group: CaseGroup) -> int:
        return max((order.index(task) for task in group.answers if task in order), default=-1)

    return sorted(groups, key=reach, reverse=True)


def _shares(case: Case, timed: Collection[str]) -> bool:
    own_timing = any(case.answers.get(task, SOLUTION) != SOLUTION for task in timed)
    return not (case.alone or own_timing) and case.status == "graded" and case.cell_timeout == Limits().cell_timeout


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
