"""A submission the harness could not run is not graded: its kernel failed to start on every attempt,
so its grade is a ``harness error`` with no check results (no zero shown as if earned), Gradescope's
results.json tells the student it is not their fault and to resubmit or ask, a batch grades it again on
its next run (a kernel the student's code killed stays as graded), and the class report counts it apart."""

import shutil

import pytest
from failing_kernel_launch import DIED_AT_START, fail_kernel_launches
from synthetic_results import LAB_ID, TASK_POINTS, lab2_result

from autograder.course.batch import BatchOptions, _prepare
from autograder.course.class_summary import class_summary_html
from autograder.course.collect import collect_submissions
from autograder.course.gradebook import write_student
from autograder.grading import GradeOptions, GradeResult, GradeStatus, grade_notebook
from autograder.lab import load_lab
from autograder.run.kernels.lifecycle import START_ATTEMPTS
from autograder.run.sandbox.bubblewrap import sandbox_problem

LAB = load_lab(LAB_ID)


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
@pytest.mark.slow
def test_a_kernel_that_never_starts_is_the_harnesss_error_and_the_student_is_told_so(tmp_path, monkeypatch):
    launches = fail_kernel_launches(monkeypatch, tmp_path, "always")
    result = grade_notebook(LAB.assignment_path, GradeOptions(LAB.id, overlap=False))
    assert result.status is GradeStatus.HARNESS_ERROR and launches() == START_ATTEMPTS
    assert result.tasks == () and result.max_score == LAB.max_score
    results_json = result.to_gradescope()  # what run_gradescope writes to results/results.json
    assert results_json["tests"] == [] and results_json["extra_data"]["status"] == "harness error"
    output = results_json["output"]
    assert output.startswith("This is not your fault, and not a grade") and "Resubmit" in output
    assert "ask your instructor" in output and DIED_AT_START in output


def test_a_batch_grades_harness_errors_again_and_keeps_what_a_students_code_did(tmp_path):
    source, out = tmp_path / "submissions", tmp_path / "out"
    source.mkdir()
    saved = {
        "ada": GradeStatus.HARNESS_ERROR,
        "bo": GradeStatus.KERNEL_DIED,  # the student's own code killed it: a result like any other
        "cy": GradeStatus.KERNEL_FAILED_TO_START,  # saved before harness errors had their name
        "di": GradeStatus.GRADED,
    }
    for student, status in saved.items():
        shutil.copyfile(LAB.assignment_path, source / f"{student}.ipynb")
        result = GradeResult(LAB.id, f"{student}.ipynb", status, "why", LAB.max_score)
        write_student(out, student, result, "<html></html>")
    _, _, todo = _prepare(BatchOptions(LAB.id, out), LAB, collect_submissions(source, LAB.id))
    assert sorted(s.student for s in todo) == ["ada", "cy"]


def test_the_class_report_counts_harness_errors_apart_from_the_scores():
    failed = GradeResult(LAB_ID, "bo.ipynb", GradeStatus.HARNESS_ERROR, "the kernel failed to start 3 times", 100.0)
    page = class_summary_html({"ada": lab2_result(), "bo": failed}, LAB_ID, list(TASK_POINTS))
    assert "1 submissions scored (and 1 harness errors)" in page
    assert "<span id='mean'>16.0</span>" in page  # ada's 16 points alone: bo's error is no zero
    assert "<td>t1</td><td>1/1</td>" in page
    assert "<p id='harness-errors'>1 submissions the harness failed to run" in page
    assert "<td>bo</td><td>the kernel failed to start 3 times</td>" in page
