"""A course as an instructor outside this repository has it: the harness built into a wheel and installed
(not editable) into a fresh venv, its commands run in empty folders. A bundled lab grades with no
checkout; in an empty folder, new-lab makes a course and its lab is assigned, graded, tested, zipped for
Gradescope and published to students, and nothing is written into the installed package."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from wheel_venv import CHECKOUT, harness_wheel, venv_with

pytestmark = pytest.mark.slow
LAB = "lab6_mine"


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """Runs the installed harness's ``autograder`` command in a folder; returns the finished process."""
    directory = tmp_path_factory.mktemp("installed-harness")
    python = venv_with(harness_wheel(directory), directory / "venv")
    environment = {k: v for k, v in os.environ.items() if k not in ("AUTOGRADER_ROOT", "AUTOGRADER_COURSE")}
    environment.pop("PYTHONPATH", None)

    def run(folder: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(python.parent / "autograder"), *args],
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            timeout=900,
        )

    run.package = Path(  # type: ignore[attr-defined]
        subprocess.run(
            [str(python), "-c", "import autograder; print(autograder.__file__)"],
            capture_output=True,
            text=True,
            check=True,
            cwd=directory,
        ).stdout.strip()
    ).parent
    return run


def _snapshot(package: Path) -> dict[str, float]:
    """Every file of the installed package but Python's bytecode caches, with its time of change."""
    return {
        str(p.relative_to(package)): p.stat().st_mtime
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_installed_harness_runs_from_its_own_files_not_this_checkout(autograder):
    assert CHECKOUT not in autograder.package.parents
    assert (autograder.package / "bundled" / "solutions" / "lab4_collectives" / "lab4_collectives.ipynb").is_file()


def test_the_installed_harness_grades_a_bundled_lab_from_an_empty_folder(autograder, tmp_path):
    listed = _ok(autograder(tmp_path, "labs"))
    assert "course: none" in listed
    for lab_id in ("lab1_distributed_arrays", "lab2_three_ways", "lab3_fsdp_tp", "lab4_collectives"):
        assert f"{lab_id} " in listed
    shutil.copy(CHECKOUT / "solutions" / "lab4_collectives" / "lab4_collectives.ipynb", tmp_path / "sub.ipynb")
    _ok(autograder(tmp_path, "grade", "sub.ipynb", "--seed", "7", "--json", "results.json"))
    results = json.loads((tmp_path / "results.json").read_text())
    lost = [t["name"] for t in results["tests"] if t["score"] < t["max_score"]]
    assert lost == [] and results["score"] == 100 and len(results["tests"]) > 10


def test_a_course_in_an_empty_folder_is_written_assigned_graded_tested_zipped_and_published(autograder, tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    before = _snapshot(autograder.package)

    written = _ok(autograder(course, "new-lab", LAB))
    assert f"wrote {course / 'autograder-course.toml'}" in written
    for path in (f"labs/{LAB}/test_{LAB}.py", f"solutions/{LAB}/{LAB}.ipynb", f"tests/labs/{LAB}_submissions.py"):
        assert (course / path).is_file(), path
    refused = autograder(course, "test", LAB)
    assert refused.returncode == 2 and f"run `autograder assign {LAB}` first" in refused.stderr

    assigned = _ok(autograder(course, "assign", LAB))
    assert "the solution scores full marks and the student notebook zero" in assigned
    below = course / "solutions" / LAB  # a course is found from a folder below it too
    assert "Total (score): 100 / 100" in _ok(autograder(below, "grade", f"{LAB}.ipynb"))
    assert "Total (score): 0 / 100" in _ok(autograder(course, "grade", f"assignments/{LAB}/{LAB}.ipynb"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    named = _ok(autograder(elsewhere, "--course", str(course), "labs"))
    assert f"{LAB}" in named and "course  assigned" in named

    submissions = tmp_path / "submissions"  # a class of two, graded on local Dask workers
    submissions.mkdir()
    shutil.copy(course / "solutions" / LAB / f"{LAB}.ipynb", submissions / "ada.ipynb")
    shutil.copy(course / "assignments" / LAB / f"{LAB}.ipynb", submissions / "bob.ipynb")
    _ok(autograder(course, "batch", str(submissions), "--lab", LAB, "--out", "grades", "--workers", "2"))
    with open(course / "grades" / "grades.csv", newline="") as handle:
        scores = {row["student"]: float(row["score"]) for row in csv.DictReader(handle)}
    assert scores == {"ada": 100, "bob": 0}

    tested = autograder(course, "test", LAB)
    assert tested.returncode == 0 and " passed" in tested.stdout, tested.stdout[-3000:]

    _ok(autograder(course, "gradescope", LAB, "--out", "autograder.zip"))
    with zipfile.ZipFile(course / "autograder.zip") as archive:
        names = set(archive.namelist())
    assert {
        f"lab/labs/{LAB}/test_{LAB}.py",
        f"lab/labs/{LAB}/reference.py",
        f"lab/assignments/{LAB}/{LAB}.ipynb",
    } <= names
    assert "lab/autograder-course.toml" in names and not any("solutions" in n for n in names)

    _ok(autograder(course, "student-wheel", LAB, "--out", "dist"))
    (wheel,) = (course / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        graders = archive.read(f"autograder/labs/{LAB}/test_{LAB}.py").decode()
        names = set(archive.namelist())
    original = (course / "labs" / LAB / f"test_{LAB}.py").read_text()
    assert "@hidden" in original and "hidden" not in graders.replace("not hidden", "")
    assert not any("bundled/" in n or n.endswith(".ipynb") for n in names)

    assert _snapshot(autograder.package) == before, "the course's commands wrote into the installed package"


def test_the_zip_of_a_course_lab_grades_in_gradescopes_layout(autograder, tmp_path):
    """The zip a course builds for its own lab installs (setup.sh) and grades a submission (run_autograder)
    with the graders it carries: the solution full marks, the student notebook zero."""
    from gradescope_session import Installation, traversable_scratch

    course = tmp_path / "course"
    course.mkdir()
    _ok(autograder(course, "new-lab", LAB))
    _ok(autograder(course, "assign", "--no-verify", LAB))
    _ok(autograder(course, "gradescope", LAB, "--out", "autograder.zip"))
    scratch = traversable_scratch()
    try:
        install = Installation(scratch, course / "autograder.zip")
        for name, notebook, score in (("solution", "solutions", 100), ("untouched", "assignments", 0)):
            files = {f"{LAB}.ipynb": (course / notebook / LAB / f"{LAB}.ipynb").read_bytes()}
            results, output, _ = install.run_autograder(name, files)
            assert results["score"] == score, output[-3000:]
            assert len(results["tests"]) > 5, results
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
