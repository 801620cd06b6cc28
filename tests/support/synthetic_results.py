"""Grade results of lab 2 built by hand, for tests of what is done with grades (no kernel involved)."""

from __future__ import annotations

from autograder.grading.pytest_plugin import CheckResult
from autograder.grading.results import GradeResult, TaskResult

LAB_ID = "lab2_three_ways"
TASK_POINTS = {"t1": 8.0, "t2": 8.0, "t3": 12.0, "t4": 12.0, "t5": 14.0, "t6": 16.0, "t7": 15.0, "t8": 15.0}


def lab2_result(
    passed: set[str] = frozenset({"t1", "t2"}), seconds: float = 20.0, status: str = "graded", notebook: str = "s.ipynb"
) -> GradeResult:
    """Each task has a values check (a quarter of its points, public) and a layout check (the rest,
    hidden for t4 and later); the tasks in ``passed`` pass both, the others fail both."""
    tasks = []
    for task, points in TASK_POINTS.items():
        ok = task in passed
        quarter = points / 4
        tasks.append(
            TaskResult(
                task,
                points,
                (
                    CheckResult(
                        task,
                        f"test_{task}_values",
                        f"{task}: the values",
                        quarter,
                        ok,
                        "" if ok else f"{task}: expected the reference values, found zeros",
                        False,
                    ),
                    CheckResult(
                        task,
                        f"test_{task}_layout",
                        f"{task}: the layout",
                        points - quarter,
                        ok,
                        "" if ok else f"{task}: expected P('x'), found replicated",
                        task >= "t4",
                    ),
                ),
            )
        )
    return GradeResult(LAB_ID, notebook, status, None, 100.0, tuple(tasks), seed=1, seconds=seconds)
