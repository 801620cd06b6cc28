"""``autograder batch``: a class of mixed submissions graded in parallel (16 on local workers, and one of
each kind on an existing Dask scheduler with two workers) to the same grades as one by one; interrupted runs resume
with every submission graded exactly once; the gradebook, feedback pages and class report."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest
from grading_session import grade_files
from hostile_submissions import FAKE_RESULTS
from lab4_collectives_submissions import CASES
from process_ended import ended

from autograder.authoring.known_grades import make_submission, solved
from autograder.course.batch import TIMING_FILE
from autograder.course.gradebook import GRADE_FILE, LOG_FILE
from autograder.fairness.core_pinning import process_cores
from autograder.grading import GRADING_FAULTS
from autograder.lab import load_lab
from autograder.run.sandbox.limits import Limits
from autograder.run.sandbox.stale_roots import OWNER_FILE

# Lab 4: the quickest lab to run, as a batch's own work (workers, resuming, the gradebook) is what is tested
LAB = load_lab("lab4_collectives")
CELL_TIMEOUT = 8
T1, T2 = (int(task.points) for task in LAB.tasks if task.id in ("t1", "t2"))  # a right t1's and t2's points
WRONG = next(case for case in CASES if case.name == "t1_psum_of_placed_blocks")  # a known-grade wrong t1
WRONG_T1 = WRONG.scores["t1"]
KINDS = {  # kind -> answers (None: a file that is not a notebook)
    "correct": solved("t1", "t2"),
    "wrong": {**WRONG.answers, **solved("t2")},
    "crashing": {**solved("t1"), "t2": "import os\nos._exit(3)"},
    "hanging": {"t1": "while True:\n    pass", **solved("t2")},
    "hostile": {"t1": FAKE_RESULTS, **solved("t2")},
    "in_a_folder": solved("t1"),
    "not_a_notebook": None,
    "corrupt": None,
}


def _write_kind(kind: str, path: Path) -> Path:
    if kind == "not_a_notebook":
        path = path.with_suffix(".pdf")
        path.write_bytes(b"%PDF-1.4 my answers")
    elif kind == "corrupt":
        path.write_text(LAB.assignment_path.read_text()[:5000])
    elif kind == "in_a_folder":
        path = make_submission(LAB, KINDS[kind], path.parent / path.stem / "lab4.ipynb")
    else:
        make_submission(LAB, KINDS[kind], path)
    return path


def _make_class(folder: Path, copies: int) -> dict[str, str]:
    """student -> kind, with ``copies`` students of each kind."""
    students = {}
    for kind in KINDS:
        for i in range(copies):
            student = f"{kind}-{i}"
            _write_kind(kind, folder / f"{student}.ipynb")
            students[student] = kind
    return students


# A shell without job control starts background jobs with SIGINT ignored, and Python keeps it ignored:
# this starts the program with Ctrl-C's usual handler, as an instructor's terminal would.
_WITH_CTRL_C = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'autograder'; runpy.run_module('autograder', run_name='__main__')"
)


def _batch(args, interruptible=False, **kwargs):
    program = ["-c", _WITH_CTRL_C] if interruptible else ["-m", "autograder"]
    command = [sys.executable, *program, "batch", *map(str, args), "--lab", LAB.id, "--cell-timeout", str(CELL_TIMEOUT)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _watch_kernels(batch: subprocess.Popen) -> dict[int, tuple[psutil.Process, Path]]:
    """The sandboxed kernels a running batch starts (pid -> process, working directory), seen until it ends."""
    seen = {}

    def watch():
        while batch.poll() is None:
            try:
                processes = psutil.Process(batch.pid).children(recursive=True)
            except psutil.Error:
                return
            for process in processes:
                try:
                    command = process.cmdline()
                except psutil.Error:
                    continue
                if command[:1] == ["bwrap"] and "ipykernel_launcher" in command:
                    seen.setdefault(process.pid, (process, Path(command[command.index("--chdir") + 1])))
            time.sleep(0.2)

    threading.Thread(target=watch, daemon=True).start()
    return seen


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _assert_gone(kernels: dict[int, tuple[psutil.Process, Path]]) -> None:
    deadline = time.monotonic() + 30  # they are shut down before the batch exits; this is a margin
    while time.monotonic() < deadline and any(_alive(p) for p, _ in kernels.values()):
        time.sleep(0.5)
    assert [p.pid for p, _ in kernels.values() if _alive(p)] == []
    assert [str(w) for _, w in kernels.values() if w.parent.exists()] == []  # each kernel's root directory


def _grades(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="session")
def class_of_16(tmp_path_factory):
    """Two students of each kind: more submissions than workers, of every kind, in any order."""
    folder = tmp_path_factory.mktemp("class16")
    return folder, _make_class(folder, copies=2)


@pytest.fixture(scope="session")
def class_of_8(tmp_path_factory):
    """One student of each kind: what a cluster's workers are shown to grade alike."""
    folder = tmp_path_factory.mktemp("class8")
    return folder, _make_class(folder, copies=1)


@pytest.fixture(scope="session")
def one_by_one(tmp_path_factory):
    """The grade of each kind of submission, graded alone (two at a time, in the session's grading processes)."""
    folder = tmp_path_factory.mktemp("alone")
    jobs = {kind: (_write_kind(kind, folder / f"{kind}.ipynb"), Limits(cell_timeout=CELL_TIMEOUT)) for kind in KINDS}
    graded = grade_files(LAB.id, jobs)
    return {kind: (result.status, {t.task: t.score for t in result.tasks}) for kind, (result, _) in graded.items()}


def _assert_same_as_one_by_one(out: Path, students: dict[str, str], one_by_one: dict) -> None:
    rows = _grades(out)
    assert sorted(rows) == sorted(students)
    for student, kind in students.items():
        status, scores = one_by_one[kind]
        row = rows[student]
        assert row["status"] == status, (student, row["reason"])
        assert {t: float(row[t]) for t in scores} == scores, student
        assert float(row["score"]) == sum(scores.values())


def test_kinds_grade_as_expected_alone(one_by_one):
    assert one_by_one["correct"] == ("graded", {**dict.fromkeys(one_by_one["correct"][1], 0), "t1": T1, "t2": T2})
    assert one_by_one["wrong"] == ("graded", {**one_by_one["correct"][1], "t1": WRONG_T1})
    assert one_by_one["crashing"][0] == "kernel died" and one_by_one["crashing"][1]["t1"] == T1
    assert one_by_one["hanging"][1]["t2"] == T2 and one_by_one["hanging"][1]["t1"] == 0
    assert one_by_one["hostile"][1]["t1"] == 0 and one_by_one["hostile"][1]["t2"] == T2
    assert one_by_one["not_a_notebook"][0] == one_by_one["corrupt"][0] == "not a notebook"


def test_local_workers_grade_like_one_by_one(class_of_16, one_by_one, tmp_path):
    folder, students = class_of_16
    done = _batch([folder, "--out", tmp_path / "out", "--workers", "2"])
    kernels = _watch_kernels(done)
    stdout, stderr = done.communicate(timeout=1800)
    assert done.returncode == 0, stderr[-3000:]
    _assert_same_as_one_by_one(tmp_path / "out", students, one_by_one)
    assert len(kernels) >= 2  # the batch's kernels (spares included): none is left after it
    _assert_gone(kernels)
    for student in students:
        results = json.loads((tmp_path / "out" / student / "results.json").read_text())
        assert {"score", "tests", "output"} <= set(results)
    report = (tmp_path / "out" / "report.html").read_text()
    assert "score histogram" in report and "most common failure" in report
    # where the time went: each grade's phases, added up over the class beside the batch's own work
    timing = json.loads((tmp_path / "out" / TIMING_FILE).read_text())
    assert timing["graded"] == len(students) and timing["workers"] == 2 and timing["publishing"] > 0
    grades = [json.loads((tmp_path / "out" / student / GRADE_FILE).read_text()) for student in students]
    ran = [grade["phases"] for grade in grades if grade["phases"]]  # not the files that are not notebooks
    assert len(ran) == sum(kind not in ("not_a_notebook", "corrupt") for kind in students.values())
    assert all(phases["kernel_start"] > 0 and phases["cells"] > 0 for phases in ran)
    assert any(phases["capture"] > 0 and phases["checks"] > 0 for phases in ran)
    assert abs(timing["phases"]["cells"] - sum(phases["cells"] for phases in ran)) < 0.01 * len(ran)
    # with a core for each, each worker (its kernels, its grader) runs on a core of its own
    cores = sorted(tuple(worker) for worker in timing["worker_cores"].values())
    if len(process_cores()) >= 2:
        assert len(cores) == 2 and all(len(worker) == 1 for worker in cores) and cores[0] != cores[1]
    # a rerun with everything graded grades nothing again
    log = (tmp_path / "out" / LOG_FILE).read_text()
    again = _batch([folder, "--out", tmp_path / "out", "--workers", "2"])
    again.communicate(timeout=600)
    assert again.returncode == 0 and (tmp_path / "out" / LOG_FILE).read_text() == log


@pytest.mark.slow
def test_an_existing_dask_scheduler_grades_like_one_by_one(class_of_8, one_by_one, tmp_path):
    folder, students = class_of_8
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                ":0",
                "--scheduler-file",
                str(scheduler_file),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    ]
    try:
        for _ in range(60):
            if scheduler_file.exists() and scheduler_file.stat().st_size:
                break
            time.sleep(0.5)
        address = json.loads(scheduler_file.read_text())["address"]
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        address,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--memory-limit",
                        "0",
                        "--no-dashboard",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
            )
        done = _batch([folder, "--out", tmp_path / "out", "--scheduler", address])
        stdout, stderr = done.communicate(timeout=1800)
        assert done.returncode == 0, stderr[-3000:]
        _assert_same_as_one_by_one(tmp_path / "out", students, one_by_one)
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _left_by_ended_graders() -> list[Path]:
    """The harness's folders in the temporary directory whose maker has ended (stale_roots.py)."""
    left = []
    for folder in Path(tempfile.gettempdir()).glob("autograder-*"):
        try:
            pid = int((folder / OWNER_FILE).read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ended(pid):
            left.append(folder)
    return left


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_an_interrupted_batch_resumes_grading_each_submission_once(tmp_path, sig, one_by_one):
    folder = tmp_path / "class"
    folder.mkdir()
    students = {f"s{i}": "correct" for i in range(8)}
    for student in students:
        _write_kind("correct", folder / f"{student}.ipynb")
    out = tmp_path / "out"
    first = _batch([folder, "--out", out, "--workers", "2"], start_new_session=True, interruptible=True)
    deadline = time.monotonic() + 900
    while len(list(out.glob(f"*/{GRADE_FILE}"))) < 3 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.2)
    os.killpg(first.pid, sig) if sig == signal.SIGKILL else first.send_signal(sig)
    first.communicate(timeout=120)
    graded_first = len(list(out.glob(f"*/{GRADE_FILE}")))
    assert 3 <= graded_first < len(students)
    left = _left_by_ended_graders()
    if sig == signal.SIGKILL:  # killed mid-grading: its workers' submission copies, kernel roots, facts
        assert left
    second = _batch([folder, "--out", out, "--workers", "2"])
    _, stderr = second.communicate(timeout=1200)
    assert second.returncode == 0, stderr[-3000:]
    assert not [folder for folder in left if folder.exists()]  # removed by the next grader (stale_roots.py)
    log = (out / LOG_FILE).read_text()
    assert sorted(_graded_once(log)) == sorted(students), log  # each graded exactly once, none lost
    _assert_same_as_one_by_one(out, students, one_by_one)


def _graded_once(log: str) -> list[str]:
    """The students graded in ``log``: each student's lines must be faults of the harness or the grader,
    which a rerun grades again by design (grading.GRADING_FAULTS), then one grade; none after it."""
    lines: dict[str, list[str]] = {}
    for line in log.splitlines():
        student, status = line.split("\t")[:2]
        lines.setdefault(student, []).append(status)
    for student, statuses in lines.items():
        assert all(status in GRADING_FAULTS for status in statuses[:-1]), (student, statuses)
        assert statuses[-1] not in GRADING_FAULTS, (student, statuses)
    return list(lines)


def test_gradescope_export_zip_is_read(tmp_path, one_by_one):
    export = tmp_path / "export"
    for number in (101, 102):
        make_submission(LAB, KINDS["correct"], export / f"submission_{number}" / f"{LAB.id}.ipynb")
    (export / "submission_metadata.yml").write_text(
        "submission_101:\n  :submitters:\n  - :name: Ada\n    :sid: s-1\n"
        "submission_102:\n  :submitters:\n  - :name: Bo\n    :sid: s-2\n"
    )
    archive = shutil.make_archive(str(tmp_path / "export"), "zip", export)
    done = _batch([archive, "--out", tmp_path / "out", "--workers", "1"])
    _, stderr = done.communicate(timeout=900)
    assert done.returncode == 0, stderr[-3000:]
    _assert_same_as_one_by_one(tmp_path / "out", {"s-1": "correct", "s-2": "correct"}, one_by_one)


def test_regrade_replaces_only_the_named_students_and_keeps_overrides(tmp_path):
    from autograder.cli import main

    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    wrong_t1 = KINDS["wrong"]["t1"]
    for student, answers in (("untouched", {}), ("right", solved("t1")), ("wrong", {"t1": wrong_t1})):
        make_submission(LAB, answers, folder / f"{student}.ipynb")
    first = _batch([folder, "--out", out, "--workers", "2"])
    _, stderr = first.communicate(timeout=900)
    assert first.returncode == 0, stderr[-3000:]
    assert {s: r["t1"] for s, r in _grades(out).items()} == {"untouched": "0", "right": f"{T1}", "wrong": f"{WRONG_T1}"}
    assert main(["override", str(out), "right", "t3", "6", "--comment", "explained it in words", "--grader", "ta"]) == 0
    saved = {s: (out / s / GRADE_FILE).read_bytes() for s in ("untouched", "right", "wrong")}
    # "wrong" resubmits a correct t1; "untouched" changes its file too, but is not regraded
    make_submission(LAB, solved("t1"), folder / "wrong.ipynb")
    make_submission(LAB, solved("t1"), folder / "untouched.ipynb")
    refused = _batch([folder, "--out", out, "--regrade", "nobody"])
    _, stderr = refused.communicate(timeout=300)
    assert refused.returncode == 2 and "no submission for nobody" in stderr
    second = _batch([folder, "--out", out, "--workers", "2", "--regrade", "wrong", "right"])
    _, stderr = second.communicate(timeout=900)
    assert second.returncode == 0, stderr[-3000:]
    rows = _grades(out)
    assert {s: (r["t1"], r["t3"]) for s, r in rows.items()} == {
        "untouched": ("0", "0"),
        "right": (f"{T1}", "6"),
        "wrong": (f"{T1}", "0"),
    }
    assert (rows["right"]["score"], rows["right"]["auto_score"], rows["right"]["t3_auto"]) == (
        f"{T1 + 6}",
        f"{T1}",
        "0",
    )
    assert (out / "untouched" / GRADE_FILE).read_bytes() == saved["untouched"]
    assert (out / "wrong" / GRADE_FILE).read_bytes() != saved["wrong"]
    log = [line.split("\t") for line in (out / LOG_FILE).read_text().splitlines()]
    assert sorted((entry[0], entry[-1]) for entry in log) == [
        ("right", "graded"),
        ("right", "regraded"),
        ("untouched", "graded"),
        ("wrong", "graded"),
        ("wrong", "regraded"),
    ]
    assert [entry[2] for entry in log if entry[0] == "wrong"] == [f"{WRONG_T1}", f"{T1}"]
    assert "explained it in words" in (out / "right" / "feedback.html").read_text()
    assert (out / "similarity.html").is_file() and "href='similarity.html'" in (out / "report.html").read_text()
