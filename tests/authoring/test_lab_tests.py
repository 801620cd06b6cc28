"""`autograder test LAB`: the checkout's tests of one lab, selected by ``--lab`` — every test parametrized
by that lab and none other; a checkout without tests/ gets a clear error."""

from __future__ import annotations

import subprocess
import sys

from autograder.authoring.lab_tests import lab_test_command
from autograder.cli import main
from autograder.lab import project_root

LAB = "lab2_three_ways"


def _collected(*options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", str(project_root() / "tests"), *options],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=project_root(),
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
    done = _collected("--lab", "lab0_nothing")
    assert done.returncode != 0 and "--lab: unknown lab lab0_nothing" in done.stdout + done.stderr


def test_the_command_runs_the_checkouts_tests_and_needs_a_checkout(monkeypatch, tmp_path, capsys):
    assert lab_test_command(LAB, ["-x"])[1:] == [
        "-m",
        "pytest",
        str(project_root() / "tests"),
        "--lab",
        LAB,
        "-p",
        "no:cacheprovider",
        "-x",
    ]
    monkeypatch.setenv("AUTOGRADER_ROOT", str(tmp_path))
    assert main(["test", LAB]) == 2
    assert f"no tests at {tmp_path / 'tests'}: `autograder test` runs a checkout's tests" in capsys.readouterr().err
