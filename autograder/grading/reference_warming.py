"""A lab's references computed ahead of its gradings, in a grading process of their own: a batch's first
worker free (course/dask_cluster.py) and the first process free of ``autograder test LAB``
(authoring/lab_suite.py) warm the lab while the other processes grade, so that no grading computes them a
second time beside the first."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.caches import WarmResult


def warm_here(lab_id: str) -> WarmResult:
    """Compute and store the lab's cached references (``autograder warm``) in this process, set up as a
    grader's first. Another grading's timed task waits for it as for a check in flight
    (``checks_running``): it loads the machine as one."""
    from autograder.fairness import checks_running
    from autograder.run import configure_grader_process

    configure_grader_process()  # before anything imports JAX
    from autograder.caches import warm_lab

    with checks_running():
        return warm_lab(lab_id)
