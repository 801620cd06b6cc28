"""What a lab's tests and ``assign`` hold its graded notebooks to, as sentences (no problem, no failure):
the solution full marks, the untouched student notebook zero, a known-grade submission exactly its
``Case``'s points. Shared by ``lab_suite`` and this repository's tests of its bundled labs.

A check of a lab's ``MEASURED_VERDICTS`` follows from the grader's own timing on that machine: no known
grade states its outcome, and it may fail only with the grader's interval on the other side of 1.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from pathlib import Path

from autograder.authoring.case_groups import CaseGroup
from autograder.authoring.known_grades import Case
from autograder.grading import CheckResult, GradeResult, GradeStatus, TaskResult
from autograder.lab import Lab
from autograder.run import TRUSTED_LIMITS

VERDICT_FAILURE = re.compile(r"expected (True|False), found (?:True|False): .* interval ([0-9.e+-]+)–([0-9.e+-]+|∞)")


def fixed_checks(checks: Iterable[CheckResult], measured: Collection[str]) -> list[CheckResult]:
    """The checks whose outcome a known grade may state: all but the measured verdicts."""
    return [c for c in checks if c.name not in measured]


def full_marks_problems(lab: Lab, result: GradeResult, measured: Collection[str] = ()) -> list[str]:
    """The solution: graded, every fixed check passed, each task's checks worth the task's points."""
    problems = _check_problems(
        result, lambda c: None if c.passed or c.name in measured else f"loses {_points(c.points)}: {c.message}"
    )
    if result.status != GradeStatus.GRADED:
        return problems
    problems += _measured_verdict_problems(result.tasks, measured)
    total = sum(t.points for t in lab.tasks)
    if result.max_score != total:
        problems.append(f"the grade is out of {result.max_score:g}, the lab's tasks of {total:g}")
    for task in result.tasks:
        worth = sum(c.points for c in task.checks)
        if worth != task.max_score:
            problems.append(
                f"task {task.task}: its checks are worth {_points(worth)} of the task's {_points(task.max_score)}"
            )
    return problems


def zero_problems(result: GradeResult) -> list[str]:
    """The untouched student notebook: graded, zero, every check saying why, none a grader's error."""
    return _check_problems(result, _blank_problem)


def _blank_problem(check: CheckResult) -> str | None:
    if check.passed and check.points > 0:
        return f"a blank task earns {_points(check.points)}"
    return None if check.message else "no message"


def case_problems(
    lab: Lab, case: Case, result: GradeResult, measured: Collection[str], group: CaseGroup | None = None
) -> list[str]:
    """A known-grade submission: its status, its points per task, no grader error, the messages it states;
    in a ``group``'s notebook, on its own tasks alone."""
    if result.status != case.status:
        return [f"status {result.status}, expected {case.status}: {result.summary()}"]
    others = group.tasks_of_others(case) if group else frozenset()
    tasks = [t for t in result.tasks if t.task not in others]
    problems = []
    scores = {t.task: sum(c.score for c in fixed_checks(t.checks, measured)) for t in tasks}
    expected = {t.id: case.scores.get(t.id, 0) for t in lab.tasks if t.id not in others}
    if scores != expected:
        failed = {
            t.task: [f"{c.name}: {c.message}" for c in fixed_checks(t.checks, measured) if not c.passed] for t in tasks
        }
        problems.append(f"scores {scores}, expected {expected}; failed: {failed}")
    problems += _measured_verdict_problems(tasks, measured)
    problems += [f"{c.name}: grader error: {c.message}" for t in tasks for c in t.checks if c.grader_error]
    for task, text in case.messages.items():
        said = " ".join(c.message for t in tasks if t.task == task for c in t.checks)
        if text not in said:
            problems.append(f"{task}'s messages do not say {text!r}: {said!r}")
    companions = group.describe(case) if group else ""
    if problems and companions:
        problems.append(companions)
    return problems


def _measured_verdict_problems(tasks: Iterable[TaskResult], measured: Collection[str]) -> list[str]:
    """A measured verdict that judged a True or False fails only with the interval on the other side of 1."""
    problems = []
    for check in (c for t in tasks for c in t.checks if c.name in measured and not c.grader_error):
        if check.passed or not re.search(r"found (True|False)\b", check.message):
            continue
        if VERDICT_FAILURE.search(check.message) is None:
            problems.append(f"{check.name}: its message gives no interval: {check.message}")
        elif not measured_side_failure(check.message):
            problems.append(f"{check.name} failed with the grader's interval across 1: {check.message}")
    return problems


def measured_side_failure(message: str) -> bool:
    """Whether a verdict's failure ``message`` gives the grader's interval wholly on the other side of 1:
    the one way a measured verdict of a right answer may fail."""
    found = VERDICT_FAILURE.search(message)
    if found is None:
        return False
    expected, low, high = found.groups()
    return float(low) > 1 if expected == "True" else high != "∞" and float(high) < 1


def _points(value: float) -> str:
    return f"{value:g} point" + ("" if value == 1 else "s")


def _check_problems(result: GradeResult, wrong) -> list[str]:
    """Each check whose grader failed, or for which ``wrong(check)`` says what is wrong."""
    if result.status != GradeStatus.GRADED:
        return [result.summary()]
    problems = []
    for task in result.tasks:
        for check in task.checks:
            said = f"the grader failed: {check.message}" if check.grader_error else wrong(check)
            if said:
                problems.append(f"task {task.task}, check {check.name}: {said}")
    return problems


def verification_problems(lab: Lab) -> list[str]:
    """What ``autograder assign`` checks before it keeps a student notebook: the lab's graders give the
    solution every point and the blank student notebook none (both the lab's own: no sandbox)."""
    from autograder.grading import GradeOptions, grade_notebook

    options = GradeOptions(lab.id, limits=TRUSTED_LIMITS)
    solution = grade_notebook(Path(lab.solution_path), options)
    blank = grade_notebook(Path(lab.assignment_path), options)
    return [f"the solution, {p}" for p in full_marks_problems(lab, solution)] + [
        f"the student notebook, {p}" for p in zero_problems(blank)
    ]
