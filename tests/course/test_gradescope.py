"""The Gradescope autograder end to end: the zip is built, unpacked into Gradescope's layout, installed
by its setup.sh into a fresh venv, and run_autograder grades each submission into results.json. Lab 4,
the quickest to run: lab 2, the heaviest, is graded in Gradescope's container by
test_gradescope_container.py."""

import json
import os
import shutil
import subprocess
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from gradescope_session import (
    UID_LEVEL,
    Installation,
    kept_kernel_roots,
    remove_scratch,
    traversable_scratch,
)
from network_attempts import ONLY_SUCCESS, Listeners, attempts_code, setuid_root_copy_of_id
from searchable_python import python_searchable_by_all, restore_modes

from autograder.authoring.known_grades import SOLUTION, make_submission
from autograder.course.gradescope_run import find_notebook
from autograder.course.gradescope_zip import build_autograder_zip
from autograder.lab import load_lab
from autograder.run.sandbox.bubblewrap import sandbox_problem
from autograder.run.sandbox.confinement import filter_problem, landlock_problem

LAB = load_lab("lab4_collectives")
MEASURED_VERDICT = "t5: `collective_faster`"  # the Gradescope test of lab 4's verdict on the grader's own timing
T1, T2 = (int(task.points) for task in LAB.tasks if task.id in ("t1", "t2"))  # a right t1's and t2's points
NOTEBOOK = f"{LAB.id}.ipynb"  # the submission's name, as a student downloads it
AS_ROOT = os.geteuid() == 0

HOSTILE = """
import json, os, signal
attempts = {}
def attempt(name, action):
    try:
        action()
        attempts[name] = 'succeeded'
    except Exception as exc:
        attempts[name] = type(exc).__name__
for name, path in READS.items():
    attempt('read ' + name, lambda p=path: open(p, 'rb').read(1))
for name, path in WRITES.items():
    attempt('write ' + name, lambda p=path: open(p, 'w').write('{"score": 100, "tests": []}'))
pid, chain = os.getppid(), []
while pid > 1:
    chain.append(pid)
    with open(f'/proc/{pid}/status') as status:
        pid = int(next(line.split()[1] for line in status if line.startswith('PPid:')))
attempt('kill the grader', lambda: os.kill(chain[0], signal.SIGKILL))
for ancestor in chain[1:]:
    attempt(f'signal ancestor {ancestor}', lambda p=ancestor: os.kill(p, 0))
open(REPORT, 'w').write(json.dumps(attempts))
"""


def hostile_code(root: Path, package: Path, other_results: Path, clone: Path, report: Path) -> str:
    reads = {
        "a clone's solution": clone,
        "graders": package / "labs" / LAB.id / f"test_{LAB.id}.py",
        "reference solutions": package / "labs" / LAB.id / "reference.py",
        "the lab's notebook": root / "source" / "lab" / "assignments" / LAB.id / f"{LAB.id}.ipynb",
        "the zip's config": root / "source" / "config.json",
        "another results file": other_results,
        "the submission's metadata": root / "submission_metadata.json",
    }
    writes = {
        "results.json": root / "results" / "results.json",
        "another results file": other_results,
        "the graders": reads["graders"],
    }
    paths = {"READS": {k: str(v) for k, v in reads.items()}, "WRITES": {k: str(v) for k, v in writes.items()}}
    return "".join(f"{name} = {value!r}\n" for name, value in paths.items()) + f"REPORT = {str(report)!r}\n" + HOSTILE


def notebook_bytes(answers: dict, scratch: Path, name: str) -> bytes:
    return make_submission(LAB, answers, scratch / "notebooks" / f"{name}.ipynb").read_bytes()


@pytest.fixture(scope="session")
def gradescope(tmp_path_factory):
    """name -> (results.json, run_autograder's output, root) for each submission, graded once per
    session two at a time; plus, when the uid level could be used, the hostile attempts' reports (the
    second tries the network) and what reached the listeners on 127.0.0.1 meanwhile."""
    if sandbox_problem() is not None and not AS_ROOT:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    scratch = traversable_scratch()
    restore = python_searchable_by_all() if AS_ROOT else None
    listeners = Listeners()
    kept: list[Path] = []  # the hostile run's kernel roots, holding its reports
    try:
        install = Installation(scratch, lab=LAB.id)
        jobs = {
            "solution": ({NOTEBOOK: LAB.solution_path.read_bytes()}, True),
            "untouched": ({NOTEBOOK: LAB.assignment_path.read_bytes()}, True),
            "kernel_dies": (
                {
                    "lab.ipynb": notebook_bytes(
                        {"t1": SOLUTION, "t2": SOLUTION, "t3": "import os\nos._exit(1)"}, scratch, "kernel_dies"
                    )
                },
                True,
            ),
            "corrupt": ({NOTEBOOK: b'{"cells": [ truncated'}, True),
            "two_notebooks": ({"a.ipynb": LAB.assignment_path.read_bytes(), "b.ipynb": b"{}"}, True),
        }
        report = network_report = None
        if AS_ROOT:
            package = next((scratch / "venv").glob("lib/python*/site-packages/autograder"))
            other = scratch / "other-run" / "results"
            other.mkdir(parents=True)
            (other / "results.json").write_text('{"score": 42}')
            os.chmod(other, 0o700)
            clone = scratch / "ta-clone" / "solutions"  # a TA's copy of the course, readable by any user
            clone.mkdir(parents=True)
            shutil.copyfile(LAB.solution_path, clone / "lab.ipynb")
            for path, mode in ((clone.parent, 0o755), (clone, 0o755), (clone / "lab.ipynb", 0o644)):
                os.chmod(path, mode)
            # the reports go in the kernel's own directory, kept for the test (AUTOGRADER_KEEP_RUNS)
            report, network_report = Path("hostile.json"), Path("network.json")
            code = hostile_code(
                scratch / "hostile", package, other / "results.json", clone / "lab.ipynb", report
            ) + attempts_code(listeners.tcp_port, listeners.udp_port, setuid_root_copy_of_id(scratch), network_report)
            jobs["hostile"] = ({"lab.ipynb": notebook_bytes({"t1": SOLUTION, "t2": code}, scratch, "hostile")}, False)
            jobs["solution at the uid level"] = ({NOTEBOOK: LAB.solution_path.read_bytes()}, False)
            (scratch / "hostile").mkdir()
            (scratch / "hostile" / "submission_metadata.json").write_text('{"users": [{"email": "a@b.c"}]}')
        with ThreadPoolExecutor(2) as pool:
            futures = {
                name: pool.submit(install.run_autograder, name, files, bwrap, name == "hostile")
                for name, (files, bwrap) in jobs.items()
            }
            graded = {name: future.result() for name, future in futures.items()}
        kept = kept_kernel_roots(graded["hostile"][1]) if "hostile" in graded else []
        reports = {path.name: path for root in kept for path in (root / "work").glob("*.json")}
        for key, name in (("hostile report", "hostile.json"), ("network report", "network.json")):
            graded[key] = json.loads(reports[name].read_text()) if name in reports else None
        graded["reached the listeners"] = listeners.reached()
        yield graded
    finally:
        listeners.close()
        restore_modes(restore)
        remove_scratch(scratch)
        for root in kept:
            remove_scratch(root)


def _task_scores(results: dict) -> dict:
    scores = {}
    for test in results["tests"]:
        task = test["name"].split(":")[0]
        scores[task] = scores.get(task, 0) + test["score"]
    return scores


def test_the_zip_is_deterministic_and_holds_what_gradescope_runs(tmp_path):
    first = build_autograder_zip(LAB.id, tmp_path / "first.zip")
    again = build_autograder_zip(LAB.id, tmp_path / "again.zip")
    assert again.read_bytes() == first.read_bytes()
    with zipfile.ZipFile(again) as archive:
        names = archive.namelist()
        modes = {info.filename: info.external_attr >> 16 & 0o777 for info in archive.infolist()}
        config = json.loads(archive.read("config.json"))
        requirements = archive.read("requirements.txt").decode()
    assert {"setup.sh", "run_autograder", "config.json", "requirements.txt"} <= set(names)
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert any(n.startswith("wheels/jax_labs_autograder-") and n.endswith(".whl") for n in names)
    assert config["lab"] == LAB.id and config["hidden_visibility"] == "after_published"
    assert "jax==" in requirements and all("==" in line for line in requirements.splitlines())
    assert "soupsieve" not in requirements  # left for pip to resolve on the image's Python


@pytest.mark.slow
def test_the_solution_gets_full_marks(gradescope):
    """Every check passes but, perhaps, the verdict on timing, which follows the grader's own measurement
    on this machine (MEASURED_VERDICTS of tests/labs/<lab id>_submissions.py)."""
    results, output, _ = gradescope["solution"]
    assert {"score", "tests", "output", "execution_time", "stdout_visibility"} <= set(results)
    assert all({"name", "score", "max_score", "status", "output", "visibility"} <= set(t) for t in results["tests"])
    (verdict,) = (t for t in results["tests"] if t["name"].startswith(MEASURED_VERDICT))
    assert {t["status"] for t in results["tests"] if t is not verdict} == {"passed"}, output
    assert results["score"] == LAB.max_score - verdict["max_score"] + verdict["score"], output
    assert verdict["status"] == "passed" or " interval " in verdict["output"], output
    assert "Sandbox:" in results["output"] and results["extra_data"]["sandbox"] in ("bubblewrap", UID_LEVEL)


def test_the_untouched_notebook_gets_zero_and_hidden_checks_wait_for_publishing(gradescope):
    results, output, _ = gradescope["untouched"]
    assert results["score"] == 0, output
    hidden = [t for t in results["tests"] if t["visibility"] != "visible"]
    assert hidden and {t["visibility"] for t in hidden} == {"after_published"}
    assert all(
        t["output"] == f"A hidden check of task {t['name'].split(':')[0]} failed (0/{t['max_score']:g} points)."
        for t in hidden
    )
    hidden_names = {t["name"].split(": ", 1)[1] for t in hidden}
    assert not any(name in results["output"] for name in hidden_names)
    assert results["stdout_visibility"] == "hidden"


def test_a_kernel_that_dies_keeps_the_points_earned_before(gradescope):
    results, output, _ = gradescope["kernel_dies"]
    assert results["extra_data"]["status"] == "kernel died", output
    scores = _task_scores(results)
    assert results["score"] == T1 + T2 and scores["t1"] == T1 and scores["t2"] == T2, output
    assert "died" in results["output"]


def test_a_corrupt_file_gets_a_result_with_its_reason(gradescope):
    results, output, _ = gradescope["corrupt"]
    assert results["score"] == 0 and results["tests"] == []
    assert "not a notebook" in results["output"] and "not valid JSON" in results["output"], output


def test_several_notebooks_get_a_result_naming_them(gradescope):
    results, _, _ = gradescope["two_notebooks"]
    assert results["score"] == 0 and "2 notebooks (a.ipynb, b.ipynb)" in results["output"]


def test_run_autograder_makes_the_harness_private(gradescope):
    _, _, root = gradescope["solution"]
    for folder in ("source", "results", "submission"):
        assert os.stat(root / folder).st_mode & 0o077 == 0, folder


@pytest.mark.skipif(not AS_ROOT, reason="the uid sandbox needs root (CI runs as root)")
def test_without_bubblewrap_a_hostile_notebook_at_the_uid_level_gets_nothing(gradescope):
    results, output, root = gradescope["hostile"]
    assert results["extra_data"]["sandbox"] == UID_LEVEL, output
    assert "Sandbox: uid, network " in results["output"]
    assert _task_scores(results).get("t1") == T1 and results["score"] == T1, output
    report = gradescope["hostile report"]
    assert report is not None, "the hostile cell did not run to its end"
    assert "read graders" in report and "kill the grader" in report
    # without Landlock, a copy of the course that file permissions leave open is open to the kernel
    open_to_all = [] if landlock_problem() is None else ["read a clone's solution"]
    assert [name for name, outcome in report.items() if outcome == "succeeded"] == open_to_all, report
    assert (root.parent / "other-run" / "results" / "results.json").read_text() == '{"score": 42}'


@pytest.mark.skipif(not AS_ROOT, reason="the uid sandbox needs root (CI runs as root)")
@pytest.mark.skipif(filter_problem() is not None, reason=f"no network filter here: {filter_problem()}")
def test_without_bubblewrap_the_network_is_closed_and_the_solution_gets_full_marks(gradescope):
    results, output, _ = gradescope["solution at the uid level"]
    assert results["extra_data"]["sandbox"] == UID_LEVEL, output
    assert "Sandbox: uid, network closed by seccomp" in results["output"]
    assert results["score"] == LAB.max_score, output
    report = gradescope["network report"]
    assert report is not None, "the network attempts did not run to their end"
    assert {name for name, outcome in report.items() if outcome == "succeeded"} == ONLY_SUCCESS, report
    assert gradescope["reached the listeners"] == []


def test_find_notebook_names_what_is_wrong(tmp_path):
    assert "empty" in find_notebook(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    assert "no notebook (.ipynb file), only: notes.txt" in find_notebook(tmp_path)
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "lab.ipynb")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / ".ipynb_checkpoints" / "lab-checkpoint.ipynb")
    assert find_notebook(tmp_path) == tmp_path / "lab.ipynb"


def test_a_wrong_hidden_visibility_is_refused():
    from autograder.course.gradescope_run import GradescopeConfig, GradescopeError

    with pytest.raises(GradescopeError, match="hidden_visibility must be one of"):
        GradescopeConfig(LAB.id, hidden_visibility="never")


def test_the_run_autograder_script_writes_results_without_the_harness(tmp_path):
    from autograder.course.gradescope_zip import RUN_AUTOGRADER

    install_like = tmp_path / "root"
    (install_like / "source").mkdir(parents=True)
    (install_like / "source" / "run_autograder").write_text(RUN_AUTOGRADER)
    env = {"PATH": "/usr/bin:/bin", "AUTOGRADER_GRADESCOPE_ROOT": str(install_like)}
    subprocess.run(["bash", str(install_like / "source" / "run_autograder")], env=env, check=True, capture_output=True)
    results = json.loads((install_like / "results" / "results.json").read_text())
    assert results["score"] == 0 and "could not be graded" in results["output"]
