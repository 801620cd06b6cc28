"""The self-check: the student checks a task from inside the notebook, in seconds::

    import autograder.self_check as ag
    ag.check("t3")        # one task; ag.check() checks every task

In the student's own kernel, the task's facts are recorded from the notebook's live namespace by the
kernel recorder grading uses, on inputs from a seed drawn now. The task's public checks then run in the
checker process (``task_checker.py``: a fresh Python with the harness's devices, kept alive between
self-checks), and the result is shown under the cell: points, each check's verdict and message, and the
expected and found layouts side by side. Hidden checks are neither run nor named. A task whose names are
not defined yet is "not attempted"; a kernel without the lab's 8 CPU devices gets a message saying how to
set them.

This package is the student's side of the harness: ``in_kernel`` is what ``ag.check`` runs in the
student's kernel, ``checker_process`` starts (once) the separate process with the grader's devices,
``task_checker`` runs in it and grades the task with the same graders as the course, and
``cell_output`` turns the result into what the notebook shows. This door loads them on first use.
Notebooks assigned before the package had this name import it as ``autograder.notebook``, which is
this same module.
"""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.self_check.in_kernel import (
        DEVICE_HELP,
        SelfCheckProblem,
        check,
        device_problem,
        find_lab,
        jax_version_warning,
        self_check_namespace,
    )

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
