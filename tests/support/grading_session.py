"""Grading a lab's test notebooks once per session, two at a time (one kernel per core), each in a grading
process of its own pinned to a core of its own where there are enough, as a batch's workers are."""

from __future__ import annotations

import atexit
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from autograder.authoring.case_groups import CaseGroup, grading_jobs
from autograder.fairness import pinned_process_pool
from autograder.grading import GradeOptions, grade_notebook, warm_here
from autograder.lab import load_lab
from autograder.run.sandbox.limits import Limits
from autograder.self_check.task_checker import public_checks

SEED = 20261121
_pools: dict[int, ProcessPoolExecutor] = {}


def _grading_processes(workers: int) -> ProcessPoolExecutor:
    """The session's grading processes, started once, each pinned to a core of its own where the machine
    has one for each (fairness/core_pinning.py): a timed task then holds up only its own core, and the other
    process grades on.

    Processes, not threads of the test process: the machine's timed turn keeps other processes' kernels
    waiting while a grading times a task, but lets the kernels of its own process's gradings run on (they
    share its one pytest session, run_graders), so two gradings in threads would time each other's load."""
    if workers not in _pools:
        _pools[workers] = pinned_process_pool(workers)
        atexit.register(_pools[workers].shutdown, cancel_futures=True)
    return _pools[workers]


def grade_all(
    lab,
    cases,
    directory: Path,
    workers: int = 2,
    include_reference: bool = True,
    self_checks: dict | None = None,
    groups: list[CaseGroup] | None = None,
    course_notebooks: bool = True,
) -> dict:
    """name -> GradeResult for every case, and the solution and the untouched student notebook.

    With ``groups`` (``case_groups.grouped`` of the cases), the cases of a group are graded in one notebook:
    each case's name maps to its group's grade, to be judged with ``case_problems(..., group)``; without,
    each case is graded alone. With ``self_checks``, also name -> the public checks the self-check's checker
    finds on the facts of that very grading, for each task whose facts were read (the facts are not kept:
    they can be large). With ``course_notebooks`` (as ``autograder test`` grades the known-grade cases), their
    kernels load what the solution compiled; without, each is graded as a student's.

    As a batch does, one process computes the lab's references while the other grades the solution; the
    rest follow in ``grading_jobs``'s order, which keeps both processes busy to the end."""
    if groups is None:
        groups = [CaseGroup((case,)) for case in cases]
    jobs = grading_jobs(lab, groups, directory, with_reference=include_reference)
    graded = grade_files(
        lab.id, jobs, workers, self_checks is not None, warm=include_reference, course_notebooks=course_notebooks
    )
    by_name = {name: name for name in jobs} | {case.name: group.name for group in groups for case in group.cases}
    if self_checks is not None:
        self_checks.update({name: graded[job][1] for name, job in by_name.items()})
    return {name: graded[job][0] for name, job in by_name.items()}


def grade_files(
    lab_id: str,
    jobs: dict[str, tuple[Path, Limits]],
    workers: int = 2,
    with_self_check: bool = False,
    warm: bool = False,
    course_notebooks: bool = False,
) -> dict:
    """name -> (GradeResult, the public checks of its facts or None) for each notebook file of ``jobs``
    (name -> (path, limits)), graded ``workers`` at a time in the session's grading processes. With
    ``warm``, the first process free computes the lab's references first (``autograder warm``), as a
    batch's first worker does: the gradings then read them instead of each computing them. With
    ``course_notebooks``, the notebooks are graded as the course's own (``GradeOptions.course_notebook``)."""
    pool = _grading_processes(workers)
    warming = pool.submit(warm_here, lab_id) if warm else None
    futures = {
        name: pool.submit(_graded, lab_id, path, limits, with_self_check, course_notebooks)
        for name, (path, limits) in jobs.items()
    }
    if warming is not None:
        warming.result()
    return {name: future.result() for name, future in futures.items()}


def _graded(lab_id: str, path: Path, limits: Limits, with_self_check: bool, course_notebook: bool):
    """In a grading process: the grade, and with ``with_self_check`` the public checks of its facts as the
    self-check's checker finds them."""
    lab = load_lab(lab_id)
    executions = []
    options = GradeOptions(
        lab_id, limits=limits, seed=SEED, on_execution=executions.append, course_notebook=course_notebook
    )
    result = grade_notebook(path, options)
    if not with_self_check or not executions:
        return result, None
    (execution,) = executions
    return result, public_checks(lab, execution.facts, SEED, execution.fact_errors)


def assert_layout_failure_explained(result, check_name: str) -> None:
    """The failed layout check says what was expected and what was found, with both pictures."""
    (check,) = [c for t in result.tasks for c in t.checks if c.name == check_name]
    assert not check.passed
    assert "expected" in check.message and "found" in check.message
    assert check.expected_picture and check.found_picture
    assert check.expected_picture != check.found_picture
