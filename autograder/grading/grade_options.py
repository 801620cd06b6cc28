"""How one notebook is to be graded, as one named object: ``grade_notebook(path, GradeOptions(...))``.
The options travel together from the command line, a batch worker or Gradescope to the grade, so a
reader follows them by name rather than by their place in a row of arguments."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

from autograder.grading.check_result import CheckResult
from autograder.run import Execution, Executor, Limits, execute_plan


@dataclass(frozen=True)
class GradeOptions:
    """``lab_id``: the lab to grade as (None: the one the notebook names). ``public_only``: the public
    checks alone, out of their own points (a student's self-check). ``limits``: the run's. ``seed``: the
    grade's (None: a fresh one). ``executor`` runs the request (``execute_plan``; a batch worker passes its
    kernel pool's ``execute``). ``overlap=False`` loads the graders (JAX's devices, the references,
    pytest) only once the kernel has ended and its memory is free: the least memory at once, where memory
    is short (a Gradescope container), at the cost of the time the overlap saves. ``on_check`` is given
    the checks done so far after each (see ``run_graders``); ``on_execution`` the execution the grade was
    made from, with its facts (not called when the notebook was not run). ``course_notebook``: the notebook
    is the course's own (a known-grade case of ``autograder test``, its untouched notebook), never a
    student's: its kernel may read what the lab's solution compiled and its malloc keeps large blocks
    (course_runs.py)."""

    lab_id: str | None = None
    _: KW_ONLY  # the rest by name
    public_only: bool = False
    limits: Limits = Limits()
    seed: int | None = None
    executor: Executor = execute_plan
    overlap: bool = True
    on_check: Callable[[list[CheckResult]], None] | None = None
    on_execution: Callable[[Execution], None] | None = None
    course_notebook: bool = False
