"""Grading a lab's test notebooks once per session, two at a time (one kernel per core)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.execute import Limits
from autograder.grade import grade_notebook
from notebooks import make_submission

SEED = 20261121


def grade_all(lab, cases, directory: Path, workers: int = 2, include_reference: bool = True) -> dict:
    """name -> GradeResult for every case, and the solution and the untouched student notebook."""
    jobs = {}
    if include_reference:
        jobs = {"solution": (lab.solution_path, Limits()), "untouched": (lab.assignment_path, Limits())}
    for case in cases:
        path = make_submission(lab, case.answers, directory / f"{case.name}.ipynb")
        jobs[case.name] = (path, Limits(cell_timeout=case.cell_timeout))
    with ThreadPoolExecutor(workers) as pool:
        futures = {name: pool.submit(grade_notebook, path, lab.id, False, limits, SEED)
                   for name, (path, limits) in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


def assert_layout_failure_explained(result, check_name: str) -> None:
    """The failed layout check says what was expected and what was found, with both pictures."""
    (check,) = [c for t in result.tasks for c in t.checks if c.name == check_name]
    assert not check.passed
    assert "expected" in check.message and "found" in check.message
    assert check.expected_picture and check.found_picture
    assert check.expected_picture != check.found_picture
