"""Statuses are members of a ``StrEnum``: written to results.json, CSV and logs as the plain words."""

import csv
import io
import json

from autograder.grading import GRADING_FAULTS, HARNESS_ERROR_ADVICE, HARNESS_ERRORS, GradeResult, GradeStatus
from autograder.run import CellStatus, RunStatus


def test_a_status_is_written_as_its_words():
    result = GradeResult("lab1", "n.ipynb", GradeStatus.KERNEL_DIED, "it died", 10.0)
    assert json.loads(json.dumps(result.to_gradescope()))["extra_data"]["status"] == "kernel died"
    row = io.StringIO()
    csv.writer(row).writerow([result.status, CellStatus.TIMEOUT])
    assert row.getvalue().strip() == "kernel died,timeout"
    assert f"{GradeStatus.NOT_A_NOTEBOOK}: why" == "not a notebook: why"


def test_a_status_read_back_is_its_member():
    result = GradeResult("lab1", "n.ipynb", GradeStatus.GRADER_ERROR, None, 10.0)
    read = GradeResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert read.status is GradeStatus.GRADER_ERROR and read == result


def test_a_completed_run_is_graded_one_never_started_is_the_harnesss_and_the_others_keep_their_words():
    assert GradeStatus.of_run(RunStatus.COMPLETED) is GradeStatus.GRADED
    assert GradeStatus.of_run(RunStatus.KERNEL_FAILED_TO_START) is GradeStatus.HARNESS_ERROR
    for status in (RunStatus.TIMEOUT, RunStatus.KERNEL_DIED):
        assert GradeStatus.of_run(status) == status and isinstance(GradeStatus.of_run(status), GradeStatus)


def test_a_grade_saved_as_kernel_failed_to_start_reads_back_as_the_harnesss_error():
    saved = GradeResult("lab1", "n.ipynb", GradeStatus.HARNESS_ERROR, "it never started", 10.0).to_dict()
    saved["status"] = "kernel failed to start"  # as grades were saved before
    read = GradeResult.from_dict(saved)
    assert read.status in HARNESS_ERRORS and read.status in GRADING_FAULTS
    assert read.summary().startswith(HARNESS_ERROR_ADVICE)
