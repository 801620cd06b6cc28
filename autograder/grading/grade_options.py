"""How one notebook is to be graded: ``grade_notebook(path, GradeOptions(...))``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

from autograder.grading.check_result import CheckResult
from autograder.run import Execution, Executor, Limits, execute_plan


@dataclass(frozen=True)
class GradeOptions:
    lab_id: str | None = None  # None: the lab the notebook names
    _: KW_ONLY  # the rest by name
    public_only: bool = False  # the public checks alone, out of their own points (a student's self-check)
    limits: Limits = Limits()
    seed: int | None = None  # None: a fresh one
    executor: Executor = execute_plan  # a batch worker passes its kernel pool's ``execute``
    # False: the graders (JAX's devices, the references, pytest) load only once the kernel's memory is free,
    # the least memory at once where memory is short (a Gradescope container), at the cost of the overlap's time
    overlap: bool = True
    on_check: Callable[[list[CheckResult]], None] | None = None  # given the checks so far after each
    on_execution: Callable[[Execution], None] | None = None  # given the run's execution (none: not run)
    course_notebook: bool = False  # the course's own notebook, never a student's (course_runs.py)
