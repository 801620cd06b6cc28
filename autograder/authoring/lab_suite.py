"""The tests of one lab, as ``autograder test LAB`` runs them wherever the lab is (a checkout's bundled
labs run the checkout's own, wider suite): a pytest module, the lab named in ``$AUTOGRADER_TEST_LAB``.
Each notebook is graded once, two at a time; the first process free computes the lab's references while
the other grades the solution.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

from autograder.authoring.assign import assign_lab
from autograder.authoring.case_groups import CaseGroup, grading_jobs, grouped, task_order, timed_tasks
from autograder.authoring.grade_expectations import case_problems, full_marks_problems, zero_problems
from autograder.authoring.known_grades import Case
from autograder.authoring.requirement_table import table_problems
from autograder.fairness import pinned_process_pool
from autograder.grading import warm_here
from autograder.lab import Lab, load_lab
from autograder.run import Limits

LAB_VARIABLE = "AUTOGRADER_TEST_LAB"
SEED = 20261121
WORKERS = 2


@functools.cache
def _lab() -> Lab:
    return load_lab(os.environ[LAB_VARIABLE])


@functools.cache
def _known_grades() -> ModuleType | None:
    """The lab's ``tests/labs/<lab>_submissions.py``, or None where it has none."""
    lab = _lab()
    if not lab.known_grades_path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"{lab.id}_submissions", lab.known_grades_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases() -> list[Case]:
    module = _known_grades()
    return list(module.CASES) if module else []


def _measured_verdicts() -> frozenset[str]:
    return frozenset(getattr(_known_grades(), "MEASURED_VERDICTS", ()))


def _graded(lab_id: str, path: Path, limits: Limits):
    """In a grading process: the notebook's grade."""
    from autograder.grading import GradeOptions, grade_notebook
    from autograder.run import configure_grader_process

    configure_grader_process()
    return grade_notebook(path, GradeOptions(lab_id, limits=limits, seed=SEED, course_notebook=True))


@functools.cache
def _groups() -> dict[str, CaseGroup]:
    return {
        case.name: group for group in grouped(_cases(), timed_tasks(_lab()), task_order(_lab())) for case in group.cases
    }


@functools.cache
def _grades() -> dict:
    """name -> GradeResult: the solution, the untouched student notebook and every known-grade case."""
    lab = _lab()
    folder = Path(tempfile.mkdtemp(prefix=f"autograder-test-{lab.id}-"))
    groups = {group.name: group for group in _groups().values()}  # each once: its cases share it
    jobs = grading_jobs(lab, groups.values(), folder)
    try:
        with pinned_process_pool(WORKERS) as pool:
            pool.submit(warm_here, lab.id)  # a failure costs only the time: each grading computes what it lacks
            futures = {name: pool.submit(_graded, lab.id, path, limits) for name, (path, limits) in jobs.items()}
            graded = {name: future.result() for name, future in futures.items()}
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the cases' notebooks, made for this grading alone
    return graded | {case: graded[group.name] for case, group in _groups().items()}


def test_the_student_notebook_is_what_assign_writes():
    lab = _lab()
    assert not assign_lab(lab.solution_path, lab.assignment_path, lab.id, compare_only=True).changed, (
        f"{lab.assignment_path} does not match {lab.solution_path}: run `autograder assign {lab.id}`"
    )


def test_solution_scores_full_marks():
    problems = full_marks_problems(_lab(), _grades()["solution"], _measured_verdicts())
    assert not problems, "\n".join(problems)


def test_untouched_student_notebook_scores_zero():
    problems = zero_problems(_grades()["untouched"])
    assert not problems, "\n".join(problems)


def test_every_requirement_has_a_check_and_a_wrong_case_that_loses_exactly_its_points():
    problems = table_problems(_lab(), _cases(), _measured_verdicts())
    assert not problems, "\n".join(problems)


def test_the_lab_has_known_grade_submissions():
    lab = _lab()
    assert _known_grades() is not None, f"write {lab.known_grades_path} (docs/writing-a-lab.md)"
    assert _cases(), f"{lab.known_grades_path}: CASES is empty"


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        cases = _cases()
        metafunc.parametrize("case", cases, ids=[c.name for c in cases])


def test_submission_loses_exactly_its_points(case):
    problems = case_problems(_lab(), case, _grades()[case.name], _measured_verdicts(), _groups()[case.name])
    assert not problems, "\n".join(problems)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main([__file__]))
