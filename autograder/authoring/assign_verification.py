"""What ``autograder assign`` checks before it keeps a student notebook: the lab's graders give the
solution every point and the blank student notebook none (both the lab's own: run without the sandbox).
"""

from __future__ import annotations

from pathlib import Path

from autograder.grading import GradeResult, GradeStatus
from autograder.lab import Lab
from autograder.run import TRUSTED_LIMITS, Limits


def _points(value: float) -> str:
    return f"{value:g} point" + ("" if value == 1 else "s")


def _check_problems(result: GradeResult, who: str, wrong) -> list[str]:
    """Each check whose grader failed, or for which ``wrong(check)`` says what is wrong."""
    if result.status != GradeStatus.GRADED:
        return [f"{who}: {result.status}: {result.reason}"]
    problems = []
    for task in result.tasks:
        for check in task.checks:
            where = f"{who}, task {task.task}, check {check.name}"
            if check.grader_error:
                problems.append(f"{where}: the grader failed: {check.message}")
            elif wrong(check):
                problems.append(f"{where}: {wrong(check)}")
    return problems


def solution_problems(result: GradeResult) -> list[str]:
    """Why a grade of the solution is not full marks."""
    problems = _check_problems(
        result,
        "the solution",
        lambda check: None if check.passed else f"loses {_points(check.points)}: {check.message}",
    )
    for task in result.tasks if result.status == GradeStatus.GRADED else ():
        if task.auto_score < task.max_score and all(c.passed for c in task.checks):
            problems.append(
                f"the solution, task {task.task}: its checks are worth {_points(task.auto_score)}"
                f" of the task's {_points(task.max_score)}"
            )
    return problems


def blank_problems(result: GradeResult) -> list[str]:
    """Why a grade of the blank student notebook is not zero."""
    return _check_problems(
        result,
        "the student notebook",
        lambda check: f"a blank task earns {_points(check.points)}" if check.passed and check.points > 0 else None,
    )


def verification_problems(lab: Lab, limits: Limits = TRUSTED_LIMITS, seed: int | None = None) -> list[str]:
    """Grade the lab's solution and its (already written) student notebook; what is wrong, or []."""
    from autograder.grading import GradeOptions, grade_notebook

    options = GradeOptions(lab.id, limits=limits, seed=seed)
    solution = grade_notebook(Path(lab.solution_path), options)
    blank = grade_notebook(Path(lab.assignment_path), options)
    return solution_problems(solution) + blank_problems(blank)
