"""The self-check: the student checks a task from inside the notebook, in seconds::

    import autograder.self_check as ag
    ag.check("t3")        # one task; ag.check() checks every task

The task's facts are recorded in the student's kernel (``in_kernel``), its public checks run in a checker
process (``checker_process`` starts it, ``task_checker`` runs in it), and ``cell_output`` shows the result.
"""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.self_check.in_kernel import (
        SelfCheckProblem,
        check,
        find_lab,
        jax_version_warning,
        self_check_namespace,
    )

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
