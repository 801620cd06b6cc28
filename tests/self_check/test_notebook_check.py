"""The self-check, a task checked from inside the notebook (``autograder.self_check``): the verdicts are
grading's public verdicts, the student's kernel shows them under the cell (labs 4 and 2 run end to end, once
per session), and what can go wrong (no lab, wrong devices, a task not attempted, a checker that dies) is said
plainly."""

from __future__ import annotations

import contextlib
import copy
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from html import unescape
from pathlib import Path

import nbformat
import pytest
from headless_chromium import chromium, render
from jupyter_client import AsyncKernelManager
from lab_submissions import CASES_BY_LAB, fixed_checks
from nbclient import NotebookClient
from process_ended import ended

import autograder.self_check as ag
from autograder.authoring.known_grades import make_submission, solved
from autograder.checks import Layout, MeshSpec, render_layout
from autograder.grading.pytest_plugin import CheckResult
from autograder.lab import load_lab
from autograder.self_check.cell_output import (
    NO_PUBLIC_CHECKS,
    NOT_ATTEMPTED,
    SelfCheckReport,
    TaskSelfCheck,
    self_check_html,
)
from autograder.self_check.checker_process import FOLDER_PREFIX, CheckerProcess, checker_environment

LAB = load_lab("lab2_three_ways")
# The solution run with its self-checks: lab 4, the quickest to run, whose timed task's verdict is clear on
# any machine (every lab's filled notebook is also run so in test_student_install.py)
SOLVED_LAB = load_lab("lab4_collectives")
VERDICT = re.compile(r"data-task='(t\d+)' data-verdict='([^']+)'")


# The self-check's verdicts are grading's public verdicts, on the facts of each known-grade submission


@pytest.mark.parametrize("lab_id", list(CASES_BY_LAB))
def test_self_check_verdicts_equal_the_public_verdicts_of_grading(lab_grades, lab_self_checks, lab_id):
    lab, grades = lab_grades(lab_id)
    self_checks = lab_self_checks(lab_id)
    assert set(self_checks) == set(grades)
    failures = 0
    for name, checks in self_checks.items():  # a verdict on timing is measured anew by each: not compared
        tasks = {c.task for c in checks}
        graded = {
            c.name: c.passed
            for t in grades[name].tasks
            if t.task in tasks
            for c in fixed_checks(lab_id, t.checks)
            if not c.hidden
        }
        assert {c.name: c.passed for c in fixed_checks(lab_id, checks)} == graded, name
        assert not any(c.hidden for c in checks)
        failures += sum(not c.passed for c in fixed_checks(lab_id, checks))
    public_tasks = {c.task for t in grades["solution"].tasks for c in t.checks if not c.hidden}
    assert {c.task for c in self_checks["solution"]} == public_tasks
    assert (
        all(c.passed for c in fixed_checks(lab_id, self_checks["solution"])) and failures
    )  # both verdicts were compared


# The lab's notebooks run with their self-check cells in a kernel, as a student runs them


def _self_check_outputs(nb) -> list[tuple[str, str]]:
    """(html, other output) of each self-check cell, in order."""
    found = []
    for cell in nb.cells:
        if cell.cell_type == "code" and ("ag.check(" in cell.source):
            html = "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)
            other = [o for o in cell.outputs if o.output_type in ("error", "stream")]
            found.append((html, str(other)))
    return found


def _run(nb, directory: Path):
    """Run ``nb`` from its own file, as Jupyter does (which names the file in ``JPY_SESSION_NAME``)."""
    directory.mkdir()
    nbformat.write(nb, directory / "lab.ipynb")
    client = NotebookClient(
        nb,
        km=AsyncKernelManager(kernel_name="python3"),
        timeout=300,
        allow_errors=True,
        resources={"metadata": {"path": str(directory)}},
    )
    # cleanup_kc: nbclient shuts down only a kernel whose manager it made, unless told to
    client.execute(cleanup_kc=True, env={**checker_environment(), "JPY_SESSION_NAME": "lab.ipynb"})
    return nb


@pytest.fixture(scope="session")
def checked_notebooks(tmp_path_factory):
    """Plain kernels running self-check cells: lab 4 with the solution's answers; lab 2's untouched student
    notebook, with a last cell checking every task of the lab its file names; and lab 2 with a wrong layout
    in t1, up to t1's check."""
    directory = tmp_path_factory.mktemp("self-check")
    answers = solved(*(t.id for t in SOLVED_LAB.tasks))
    solution = nbformat.read(make_submission(SOLVED_LAB, answers, directory / "s.ipynb"), 4)
    untouched = copy.deepcopy(LAB.template)
    untouched.cells.append(nbformat.v4.new_code_cell("import autograder.self_check as ag\nag.check()"))
    wrong = nbformat.read(
        make_submission(
            LAB, {"t1": "A_sharded = jax.device_put(A, NamedSharding(mesh, P('y', 'x')))"}, directory / "w.ipynb"
        ),
        4,
    )
    wrong.cells = wrong.cells[: [c.id for c in wrong.cells].index("check-t1") + 1]
    notebooks = {"solution": solution, "untouched": untouched, "wrong_layout": wrong}
    with ThreadPoolExecutor(2) as pool:
        runs = {name: pool.submit(_run, nb, directory / name) for name, nb in notebooks.items()}
        return {name: run.result() for name, run in runs.items()}


@pytest.mark.slow
def test_every_check_of_the_solution_passes_in_the_notebook(checked_notebooks):
    outputs = _self_check_outputs(checked_notebooks["solution"])
    assert len(outputs) == len(SOLVED_LAB.tasks)
    for task, (html, other) in zip(SOLVED_LAB.tasks, outputs):
        assert VERDICT.findall(html) == [(task.id, "passed")], html
        assert other == "[]"


@pytest.mark.slow
def test_the_untouched_notebook_shows_failed_or_not_attempted_without_a_traceback(checked_notebooks):
    outputs = _self_check_outputs(checked_notebooks["untouched"])
    assert len(outputs) == len(LAB.tasks) + 1
    for task, (html, other) in zip(LAB.tasks, outputs):
        assert [t for t, _ in VERDICT.findall(html)] == [task.id]
        assert VERDICT.findall(html)[0][1] in ("failed", NOT_ATTEMPTED)
        assert other == "[]" and "Traceback" not in html
    every = VERDICT.findall(outputs[-1][0])
    assert [t for t, _ in every] == [t.id for t in LAB.tasks]
    assert {v for _, v in every} <= {"failed", NOT_ATTEMPTED} and NOT_ATTEMPTED in {v for _, v in every}


@pytest.mark.slow
def test_a_wrong_layout_shows_the_expected_and_found_pictures(checked_notebooks):
    ((html, other),) = _self_check_outputs(checked_notebooks["wrong_layout"])
    assert VERDICT.findall(html) == [("t1", "partial")] and other == "[]"
    expected, found = re.findall(r"(?:expected|found)<pre>(.*?)</pre>", html, re.S)
    assert "CPU 0" in expected and expected != found


# What can go wrong is said plainly


def test_tasks_not_attempted_are_said_so_without_running_checks():
    report = ag.self_check_namespace({"A": 1}, None, LAB.id)
    assert report.problem is None
    assert [(t.task, t.verdict) for t in report.tasks] == [(t.id, NOT_ATTEMPTED) for t in LAB.tasks]
    assert report.tasks[0].undefined == ("A_sharded",)
    assert "None of <code>A_sharded</code> is defined yet" in self_check_html(report)


def test_the_lab_is_read_from_the_notebook_file_or_asked_for(tmp_path, monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert ag.find_lab(None, {"__vsc_ipynb_file__": str(LAB.assignment_path)}) == LAB.id
    monkeypatch.chdir(LAB.assignment_path.parent)
    monkeypatch.setenv("JPY_SESSION_NAME", f"somewhere/{LAB.assignment_path.name}")
    assert ag.find_lab(None, {}) == LAB.id
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ag.SelfCheckProblem, match='lab="lab1_distributed_arrays"'):
        ag.find_lab(None, {})
    report = ag.self_check_namespace({}, "t1", None)
    assert report.problem and "Which lab is this?" in report.problem
    assert "There is no lab 'lab9'" in ag.self_check_namespace({}, "t1", "lab9").problem
    assert "has no task 't99'; its tasks are t1, t2" in ag.self_check_namespace({}, "t99", LAB.id).problem


def test_a_kernel_without_8_cpu_devices_is_told_how_to_set_them():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "JAX_"))}
    env["JAX_PLATFORMS"] = "cpu"
    code = (
        "import autograder.self_check as ag\nfrom autograder.self_check.cell_output import self_check_html\n"
        f"print(self_check_html(ag.self_check_namespace({{'A_sharded': 1}}, 't1', {LAB.id!r})))"
    )
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "data-verdict='problem'" in shown.stdout and "JAX in this kernel has 1 cpu device." in shown.stdout
    assert 'os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"' in unescape(shown.stdout)
    assert "restart the kernel" in shown.stdout and "Traceback" not in shown.stdout + shown.stderr


def test_the_checker_answers_reports_bad_requests_and_is_restarted_when_it_dies(tmp_path):
    checker = CheckerProcess(timeout=300)
    try:
        checks = checker.request({"lab": LAB.id, "seed": 1, "tasks": {"t1": str(tmp_path / "none")}})["checks"]
        assert [c["name"] for c in checks] == ["test_t1_values", "test_t1_layout", "test_t1_mesh_axes"]
        assert not any(c["passed"] for c in checks)
        assert all("no facts were written for t1" in c["message"] for c in checks)
        assert "unknown lab 'lab9'" in checker.request({"lab": "lab9", "seed": 1, "tasks": {}})["error"]
        assert "non-negative integer seed" in checker.request({"lab": LAB.id, "seed": "x", "tasks": {}})["error"]
        first = checker.pid
        os.kill(first, 9)
        assert checker.request({"lab": LAB.id, "seed": 1, "tasks": {}})["checks"] == []
        assert checker.pid not in (None, first)
    finally:
        checker.close()
    assert checker.pid is None


def test_an_interrupted_cell_leaves_the_checker_serving_and_an_orphaned_checker_removes_its_folder(tmp_path):
    """An interrupt sent to the checker (as one for the kernel's whole process group would be, did the
    checker not have a session of its own) leaves it serving; a kernel killed at shutdown never closes its
    checker, whose folder (and log) would stay behind."""
    checker = CheckerProcess(timeout=300)
    try:
        assert checker.request({"lab": LAB.id, "seed": 1, "tasks": {}})["checks"] == []
        first = checker.pid
        os.kill(first, signal.SIGINT)
        assert checker.request({"lab": LAB.id, "seed": 1, "tasks": {}})["checks"] == []
        assert checker.pid == first
        process, folder = checker._process, checker._directory
        assert folder is not None and folder.name.startswith(FOLDER_PREFIX) and folder.is_dir()
        process.stdin.close()  # as when its parent dies: the checker's input ends, nobody removes its folder
        process.wait(60)
        assert not folder.exists()
    finally:
        checker.close()


def test_a_kernel_killed_with_its_process_group_leaves_no_checker_or_folder_behind(tmp_path):
    """Jupyter stops a kernel by killing its whole process group. The checker it started is in a session
    of its own: it outlives the kill, reads the end of its input and removes its folder and log."""
    kernel_code = (
        "from autograder.self_check.checker_process import CheckerProcess\n"
        "checker = CheckerProcess(timeout=300)\n"
        f"checker.request({{'lab': {LAB.id!r}, 'seed': 1, 'tasks': {{}}}})\n"
        "print(checker.pid, checker._directory, flush=True)\n"
        "import time; time.sleep(600)\n"
    )
    kernel = subprocess.Popen(
        [sys.executable, "-c", kernel_code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    pid, folder = kernel.stdout.readline().split()
    try:
        assert Path(folder).is_dir()
        os.killpg(kernel.pid, signal.SIGKILL)
        kernel.wait(60)
        deadline = time.monotonic() + 60
        while Path(folder).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(folder).exists(), "the checker's folder stayed behind"
        while not ended(int(pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ended(int(pid)), "the checker outlived its kernel"
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["rm", "-rf", folder], check=False)


# The self-check's result renders in a browser


def _report() -> SelfCheckReport:
    mesh = MeshSpec((2, 4), ("x", "y"))
    expected = render_layout(Layout.of_spec(mesh, ("x", "y"), (4, 16)))
    found = render_layout(Layout.of_spec(mesh, ("y", "x"), (4, 16)))
    t1 = (
        CheckResult("t1", "test_t1_values", "`A_sharded` holds the values of A", 3, True, "", False),
        CheckResult(
            "t1",
            "test_t1_layout",
            "`A_sharded` is laid out as P('x', 'y')",
            5,
            False,
            "`A_sharded`: expected rows over `x`, found rows over `y` <b>",
            False,
            expected_picture=expected,
            found_picture=found,
        ),
    )
    return SelfCheckReport(
        LAB.id, (TaskSelfCheck("t1", t1), TaskSelfCheck("t2", undefined=("A_xN", "A_Ny")), TaskSelfCheck("t3"))
    )


def test_the_self_check_result_shows_points_messages_and_pictures_escaped():
    html = self_check_html(_report())
    assert VERDICT.findall(html) == [("t1", "partial"), ("t2", NOT_ATTEMPTED), ("t3", NO_PUBLIC_CHECKS)]
    assert "checked only when your notebook is graded" in html
    assert "3 / 8" in html and "expected<pre>" in html and "found<pre>" in html and "CPU 0" in html
    assert "&lt;b&gt;" in html and "<b>," not in html
    assert "body{" not in html  # styles only the check's own output, not the notebook around it


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed")
def test_the_self_check_result_renders_in_a_headless_browser(tmp_path):
    page = tmp_path / "cell.html"
    page.write_text(
        "<!doctype html><html><head><meta charset='utf-8'></head><body><div class='output'>"
        f"{self_check_html(_report())}</div></body></html>"
    )
    shot = tmp_path / "cell.png"
    dom = render(page, shot)
    assert 'data-task="t1" data-verdict="partial"' in dom and 'data-verdict="not attempted"' in dom
    assert 'data-verdict="no public checks"' in dom
    assert "CPU 0" in dom and "Task t1" in dom
    assert shot.stat().st_size > 10_000  # a real picture, not an empty page


def test_a_labs_own_probe_runs_in_the_students_kernel():
    report = ag.self_check_namespace({"layer_out": 1.0}, "t6", "lab3_fsdp_tp")
    ((task),) = report.tasks
    assert report.problem is None and task.verdict == "failed"
    assert any("name 'tp_layer' is not defined" in c.message for c in task.checks), task.checks
