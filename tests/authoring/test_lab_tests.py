"""`autograder test LAB`: for a bundled lab in this checkout, the checkout's tests of that lab, selected by
``--lab`` — every test parametrized by that lab and none other; for any other lab, the packaged lab suite;
a lab not assigned yet gets a clear error, not failures."""

from __future__ import annotations

import os
import subprocess
import sys

from autograder.authoring.lab_suite import lab_test_command
from autograder.cli import main
from autograder.paths import PACKAGE_DIR

CHECKOUT = PACKAGE_DIR.parent

LAB = "lab2_three_ways"


def _collected(*options: str, tests: str = "tests") -> subprocess.CompletedProcess:
    """pytest's collection of ``tests`` (a folder or file of the checkout's) with ``options``."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", str(CHECKOUT / tests), *options],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=CHECKOUT,
    )


def test_the_lab_option_keeps_every_test_of_that_lab_and_no_other():
    done = _collected("--lab", LAB)
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    assert ids and all(f"[{LAB}" in test_id for test_id in ids)
    files = {test_id.split("::")[0].rpartition("/")[2] for test_id in ids}
    assert {
        "test_lab_grades.py",
        "test_setup_cell.py",
        "test_student_install.py",
        "test_notebook_check.py",
        "test_assign.py",
        "test_plan.py",
    } <= files
    kinds = {test_id.split("::")[1].split("[")[0] for test_id in ids}
    assert {
        "test_solution_scores_full_marks",
        "test_untouched_student_notebook_scores_zero",
        "test_submission_loses_exactly_its_points",
    } <= kinds


def test_an_unknown_lab_is_refused_by_name():
    # the lab's name is checked once the tests are collected, whichever they are: one small file will do
    done = _collected("--lab", "lab0_nothing", tests="tests/authoring/test_lab_tests.py")
    assert done.returncode != 0 and "--lab: unknown lab lab0_nothing" in done.stdout + done.stderr


def test_the_command_runs_the_checkouts_tests_for_a_bundled_lab_here(monkeypatch, tmp_path, capsys):
    assert lab_test_command(LAB, ["-x"])[1:] == [
        "-m",
        "pytest",
        str(CHECKOUT / "tests"),
        "--lab",
        LAB,
        "-p",
        "no:cacheprovider",
        "-x",
    ]
    solution = tmp_path / "solutions" / LAB / f"{LAB}.ipynb"  # the bundled labs' notebooks elsewhere, not assigned
    solution.parent.mkdir(parents=True)
    solution.write_bytes((CHECKOUT / "solutions" / LAB / f"{LAB}.ipynb").read_bytes())
    monkeypatch.setenv("AUTOGRADER_ROOT", str(tmp_path))
    assert main(["test", LAB]) == 2
    assert "run `autograder assign lab2_three_ways` first" in capsys.readouterr().err


def test_a_course_lab_runs_the_packaged_lab_suite(monkeypatch, tmp_path):
    from scaffolded_labs import use_tmp_labs

    from autograder.authoring import lab_suite

    use_tmp_labs(monkeypatch, tmp_path)
    assert main(["new-lab", "lab7_course"]) == 0
    assert main(["assign", "--no-verify", "lab7_course"]) == 0
    command = lab_test_command("lab7_course")
    assert command[3] == lab_suite.__file__ and "--lab" not in command
    # no configuration around the harness reaches it: a checkout's would run it on two workers
    assert command[command.index("-c") + 1] == os.devnull


def test_a_course_for_other_harness_versions_is_told_so(monkeypatch, tmp_path):
    from scaffolded_labs import use_tmp_labs

    from autograder.authoring.lab_suite import harness_outside_course_range
    from autograder.paths import COURSE_FILE

    use_tmp_labs(monkeypatch, tmp_path)
    assert harness_outside_course_range() is None  # a course that declares no range
    (tmp_path / COURSE_FILE).write_text('[course]\nlabs = "labs"\nharness = ">=0.1,<0.2"\n')
    assert "written for the harness >=0.1,<0.2" in harness_outside_course_range()
    (tmp_path / COURSE_FILE).write_text('[course]\nlabs = "labs"\nharness = ">=0.2,<1"\n')
    assert harness_outside_course_range() is None
