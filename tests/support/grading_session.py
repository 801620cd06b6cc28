"""Grading a lab's test notebooks once per session, two at a time (one kernel per core)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from submission_notebooks import make_submission

from autograder.grading.pipeline import grade_with_execution
from autograder.run.kernel import Limits
from autograder.self_check.task_checker import public_checks

SEED = 20261121


def grade_all(
    lab, cases, directory: Path, workers: int = 2, include_reference: bool = True, inline: dict | None = None
) -> dict:
    """name -> GradeResult for every case, and the solution and the untouched student notebook.

    With ``inline``, also name -> the public checks the notebook's checker finds on the facts of that
    very grading, for each task whose facts were read (the facts are not kept: they can be large)."""
    jobs = {}
    if include_reference:
        jobs = {"solution": (lab.solution_path, Limits()), "untouched": (lab.assignment_path, Limits())}
    for case in cases:
        path = make_submission(lab, case.answers, directory / f"{case.name}.ipynb")
        jobs[case.name] = (path, Limits(cell_timeout=case.cell_timeout))
    # Two at a time in threads of this process: they share its timed turn (run/timed_turns.py)
    with ThreadPoolExecutor(workers) as pool:
        futures = {
            name: pool.submit(_graded, lab, path, limits, inline is not None) for name, (path, limits) in jobs.items()
        }
        graded = {name: future.result() for name, future in futures.items()}
    if inline is not None:
        inline.update({name: checks for name, (_, checks) in graded.items()})
    return {name: result for name, (result, _) in graded.items()}


def _graded(lab, path: Path, limits: Limits, inline: bool):
    result, execution = grade_with_execution(path, lab.id, False, limits, SEED)
    if not inline or execution is None:
        return result, None
    return result, public_checks(lab, execution.facts, SEED, execution.fact_errors)


def assert_layout_failure_explained(result, check_name: str) -> None:
    """The failed layout check says what was expected and what was found, with both pictures."""
    (check,) = [c for t in result.tasks for c in t.checks if c.name == check_name]
    assert not check.passed
    assert "expected" in check.message and "found" in check.message
    assert check.expected_picture and check.found_picture
    assert check.expected_picture != check.found_picture
