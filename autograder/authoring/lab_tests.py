"""``autograder test LAB``: every test of one lab. A bundled lab in the harness's own checkout runs the
checkout's tests (``--lab``); any other runs ``lab_suite`` under no pytest configuration, alike from a wheel
or a checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder.authoring import lab_suite
from autograder.lab import Lab, LabError, load_lab
from autograder.paths import PACKAGE_DIR


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
    suite = [str(Path(lab_suite.__file__)), "-c", os.devnull, "-p", "no:cacheprovider", "--rootdir", str(lab.root)]
    return [sys.executable, "-m", "pytest", *suite, *pytest_args]


def harness_outside_course_range() -> str | None:
    """What to say when the installed harness is outside the versions the course declares, or None."""
    from importlib import metadata

    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from autograder.grading import DISTRIBUTION
    from autograder.lab import course_in_view

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
    environment = {**os.environ, lab_suite.LAB_VARIABLE: lab_id}
    return subprocess.run(command, cwd=lab.root, env=environment).returncode
