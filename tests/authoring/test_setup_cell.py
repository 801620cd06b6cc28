"""The first code cell of every lab: it sets the lab's 8 CPU devices in a plain kernel, says to restart
when JAX had already started, names the install command, and changes nothing under grading."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest
from grading_session import SEED
from lab_submissions import MEASURED_VERDICTS

from autograder.authoring.setup_cell import CELL_ID, INSTALL_COMMAND, RESTART_MESSAGE, SOURCE
from autograder.lab import lab_ids, load_lab
from autograder.run.kernels.devices import DEVICE_COUNT, INHERITED_PREFIXES_DROPPED, kernel_environment

REPORT = "import os, jax; print(jax.device_count(), os.environ['XLA_FLAGS'])"


def _plain_environment() -> dict[str, str]:
    """The environment a student's Jupyter gives a kernel: none of the harness's device settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(INHERITED_PREFIXES_DROPPED)}


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def _first_code_cell(nb):
    return next(cell for cell in nb.cells if cell.cell_type == "code")


@pytest.mark.parametrize("lab_id", lab_ids())
def test_the_setup_cell_is_the_first_code_cell_of_the_solution_and_locked_in_the_student_notebook(lab_id):
    lab = load_lab(lab_id)
    solution = _first_code_cell(nbformat.read(lab.solution_path, as_version=4))
    assert (solution.id, solution.source) == (CELL_ID, SOURCE)
    student = _first_code_cell(lab.template)
    assert (student.id, student.source) == (CELL_ID, SOURCE)
    assert student.metadata["autograder"] == {"task": None, "answer": False}
    assert INSTALL_COMMAND in SOURCE and INSTALL_COMMAND.endswith(".whl")


def test_in_a_plain_kernel_jax_gets_the_labs_devices():
    env = {
        **_plain_environment(),
        "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false --xla_force_host_platform_device_count=2",
    }
    shown = _run(SOURCE + REPORT, env)
    assert shown.returncode == 0, shown.stderr
    count, *flags = shown.stdout.split()
    assert int(count) == DEVICE_COUNT and RESTART_MESSAGE not in shown.stderr
    assert flags == ["--xla_cpu_multi_thread_eigen=false", f"--xla_force_host_platform_device_count={DEVICE_COUNT}"]


def test_when_jax_started_first_it_says_to_restart_the_kernel():
    shown = _run("import jax; jax.devices()\n" + SOURCE, _plain_environment())
    assert shown.returncode == 0, shown.stderr
    assert f"JAX started with 1 device(s) before this cell ran; the lab needs 8: {RESTART_MESSAGE}." in shown.stderr


def test_under_the_harness_environment_it_changes_nothing():
    code = (
        "import os, jax\njax.devices()\nbefore = dict(os.environ)\n"
        + SOURCE
        + "\nassert dict(os.environ) == before, 'the environment changed'\nprint(jax.device_count())"
    )
    shown = _run(code, kernel_environment(_plain_environment()))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == [str(DEVICE_COUNT)] and shown.stderr == ""


def _graded(notebook, lab_id: str, root=None) -> dict:
    """Gradescope's results of ``autograder grade`` (a process of its own, as graders run it)."""
    out = notebook.with_suffix(".results.json")
    env = {**os.environ, **({"AUTOGRADER_ROOT": str(root)} if root else {})}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            str(notebook),
            "--lab",
            lab_id,
            "--seed",
            str(SEED),
            "--json",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


@pytest.mark.slow
def test_the_grade_is_the_same_without_the_setup_cell(lab_grades, tmp_path):
    """The lab 4 solution as the lab is (the session's grading of it), and graded against a copy of the lab
    whose notebooks have no setup cell: the same checks pass, for the same points (but for the verdicts
    judged against the grader's own timing of each grading, MEASURED_VERDICTS). Lab 4: the quickest lab
    to grade again; the setup cell is the same in every lab."""
    lab, grades = lab_grades("lab4_collectives")
    root = tmp_path / "root"
    for path in (lab.solution_path, lab.assignment_path):
        nb = nbformat.read(path, as_version=4)
        nb.cells = [cell for cell in nb.cells if cell.get("id") != CELL_ID]
        copy = root / path.relative_to(lab.root)
        copy.parent.mkdir(parents=True)
        nbformat.write(nb, copy)
    solution = grades["solution"]
    measured = {f"{t.task}: {c.title}" for t in solution.tasks for c in t.checks if c.name in MEASURED_VERDICTS[lab.id]}
    with_cell = solution.to_gradescope()
    without_cell = _graded(root / lab.solution_path.relative_to(lab.root), lab.id, root)

    def verdicts(results):
        return [(t["name"], t["status"], t["score"]) for t in results["tests"] if t["name"] not in measured]

    assert verdicts(with_cell) == verdicts(without_cell)
    assert len(verdicts(with_cell)) == len(with_cell["tests"]) - len(measured) > 20
    assert without_cell["score"] == 100
