"""``autograder test LAB``: every test of one lab. A bundled lab in the harness's own checkout runs the
checkout's tests (``--lab``); any other runs this pytest module, the lab named in ``$AUTOGRADER_TEST_LAB``,
under no pytest configuration, alike from a wheel or a checkout. Each notebook is graded once, two at a
time; the first process free computes the lab's references while the other grades the solution.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from autograder.authoring.assign import assign_lab
from autograder.authoring.case_groups import CaseGroup, grading_jobs, grouped, task_order, timed_tasks
from autograder.authoring.grade_expectations import case_problems, full_marks_problems, zero_problems
from autograder.authoring.known_grades import Case
from autograder.authoring.requirement_table import table_problems
from autograder.fairness import pinned_process_pool
from autograder.grading import DISTRIBUTION, warm_here
from autograder.lab import Lab, LabError, course_in_view, load_lab
from autograder.paths import PACKAGE_DIR
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


def checkout_tests(lab: Lab) -> Path | None:
    """The harness checkout's ``tests/`` for a bundled lab run from that checkout, else None."""
    folder = PACKAGE_DIR.parent / "tests"
    bundled_here = lab.is_bundled and lab.root == PACKAGE_DIR.parent
    return folder if bundled_here and (folder / "conftest.py").is_file() else None


def lab_test_command(lab_id: str, pytest_args: Sequence[str] = ()) -> list[str]:
    """The pytest command that runs every test of ``lab_id`` (and ``pytest_args``, e.g. ``-x``)."""
    lab = load_lab(lab_id)
    if not lab.solution_path.is_file():
        raise LabError(f"{lab_id} has no solution notebook at {lab.solution_path}")
    if not lab.assignment_path.is_file():
        raise LabError(
            f"{lab_id} has no student notebook yet ({lab.assignment_path}): run `autograder assign {lab_id}` first"
        )
    tests = checkout_tests(lab)
    if tests is not None:
        return [sys.executable, "-m", "pytest", str(tests), "--lab", lab_id, "-p", "no:cacheprovider", *pytest_args]
    suite = [str(Path(__file__)), "-c", os.devnull, "-p", "no:cacheprovider", "--rootdir", str(lab.root)]
    return [sys.executable, "-m", "pytest", *suite, *pytest_args]


def harness_outside_course_range() -> str | None:
    """What to say when the installed harness is outside the versions the course declares, or None."""
    course = course_in_view()
    if course is None or not course.harness:
        return None
    try:
        installed, wanted = metadata.version(DISTRIBUTION), SpecifierSet(course.harness)
    except (metadata.PackageNotFoundError, InvalidSpecifier):
        return None
    if wanted.contains(installed, prereleases=True):
        return None
    return (
        f"note: the course's labs are written for the harness {course.harness} (autograder-course.toml), "
        f"and {installed} is installed: a check may behave otherwise; install a version in that range, or "
        "test the labs on this one and update the range"
    )


def run_lab_tests(lab_id: str, pytest_args: Sequence[str] = ()) -> int:
    """Run them in the lab's folder; pytest's exit status."""
    command = lab_test_command(lab_id, list(pytest_args))
    note = harness_outside_course_range()
    if note:
        print(note, file=sys.stderr)
    print(" ".join(command), flush=True)
    lab = load_lab(lab_id)
    environment = {**os.environ, LAB_VARIABLE: lab_id}
    return subprocess.run(command, cwd=lab.root, env=environment).returncode


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main([__file__]))
