"""A grader's overrides: read and checked from overrides.csv, applied to exactly one task of one student in
every output, kept through reruns, and refused (changing nothing) when a row is wrong."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from synthetic_results import LAB_ID, TASK_POINTS, lab2_result

from autograder.authoring.known_grades import make_submission
from autograder.cli import main
from autograder.course.adjustments import (
    OVERRIDES_FILE,
    Adjustments,
    Override,
    OverrideError,
    apply_overrides,
    current_overrides,
    parse_overrides,
    record_override,
    validate_overrides,
)
from autograder.course.batch import BatchOptions, run_batch
from autograder.course.gradebook import FEEDBACK_FILE, GRADE_FILE, LOG_FILE, RESULTS_FILE, load_results
from autograder.grading.results import GradeResult
from autograder.lab import load_lab

HEADER = "student,task,points,comment,grader\n"


def _override(student="ada", task="t3", points=9.0, comment="partial credit: right idea", grader="ta1"):
    return Override(student, task, points, comment, grader)


def test_an_override_changes_one_task_and_keeps_the_automatic_points():
    result = lab2_result(passed={"t1", "t2"})
    adjusted = apply_overrides(result, {"t3": _override()}, TASK_POINTS)
    changed = {t.task for t, before in zip(adjusted.tasks, result.tasks) if t.score != before.score}
    assert changed == {"t3"}
    t3 = adjusted.tasks[2]
    assert (t3.score, t3.auto_score, t3.override.comment) == (9.0, 0.0, "partial credit: right idea")
    assert (adjusted.score, adjusted.auto_score) == (25.0, 16.0)
    assert adjusted.automatic() == result
    again = GradeResult.from_dict(json.loads(json.dumps(adjusted.to_dict())))
    assert again == adjusted and again.tasks[2].override.grader == "ta1"


def test_a_submission_that_could_not_run_can_be_scored_by_hand():
    result = GradeResult(LAB_ID, "essay.pdf", "not a notebook", "it is a PDF", 100.0)
    adjusted = apply_overrides(result, {"t2": _override(task="t2", points=8)}, TASK_POINTS)
    assert [(t.task, t.score, t.auto_score) for t in adjusted.tasks] == [("t2", 8.0, 0.0)]
    assert adjusted.automatic() == result


def test_the_last_row_wins_and_auto_goes_back_to_the_automatic_points():
    rows = parse_overrides(
        HEADER + "ada,t3,4,first look,ta1\nada,t3,9,second look,ta2\nbo,t1,auto,undo,ta1\n"
        "bo,t2,5,typo,ta1\nbo,t2,auto,undo,ta1\n"
    )
    current = current_overrides(rows)
    assert list(current) == ["ada"] and current["ada"]["t3"].points == 9 and current["ada"]["t3"].grader == "ta2"


@pytest.mark.parametrize(
    "row, message",
    [
        ("zed,t3,5,c,ta", "unknown student 'zed'"),
        ("ada,t12,5,c,ta", "unknown task 't12'"),
        ("ada,t1,9,c,ta", "9 points for t1 are outside 0..8"),
        ("ada,t1,-1,c,ta", "-1 points for t1 are outside 0..8"),
    ],
)
def test_bad_rows_are_refused_naming_the_line(row, message):
    rows = parse_overrides(HEADER + "ada,t3,5,fine,ta\n" + row + "\n")
    with pytest.raises(OverrideError, match="line 3: " + message.replace(".", r"\.")):
        validate_overrides(rows, {"ada", "bo"}, TASK_POINTS)


@pytest.mark.parametrize("points", ["ten", "nan", "inf", ""])
def test_points_that_are_not_a_number_are_refused(points):
    with pytest.raises(OverrideError, match=f"line 2: points '{points}' are not a"):
        parse_overrides(HEADER + f"ada,t3,{points},c,ta\n")


def test_a_file_without_the_columns_is_refused():
    with pytest.raises(OverrideError, match="expected the columns student, task, points, comment, grader"):
        parse_overrides("name,question,score\nada,t3,5\n")


def _graded_class(tmp_path: Path) -> tuple[Path, Path]:
    """OUT with three graded students (their outputs written as the batch writes them), and their notebooks."""
    out, folder = tmp_path / "out", tmp_path / "submissions"
    lab = load_lab(LAB_ID)
    adjustments = Adjustments(TASK_POINTS, {}, None)
    results = {"ada": lab2_result({"t1", "t2"}), "bo": lab2_result({"t1"}), "cy": lab2_result(set())}
    from autograder.course.adjustments import publish_student, publish_summaries

    for student, result in results.items():
        make_submission(lab, {}, folder / f"{student}.ipynb")
        publish_student(out, student, adjustments.apply(student, result))
    publish_summaries(out, LAB_ID, list(TASK_POINTS), load_results(out))
    return out, folder


def _snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _rows(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}


def test_the_override_command_changes_one_task_of_one_student_in_every_output(tmp_path, capsys):
    out, _ = _graded_class(tmp_path)
    before, rows_before = _snapshot(out), _rows(out)
    assert (
        main(["override", str(out), "bo", "t3", "10", "--comment", "right idea, typo in the spec", "--grader", "ta1"])
        == 0
    )
    assert "bo t3: 10 / 12 (the checks gave 0); score 8 → 18" in capsys.readouterr().out
    after = _snapshot(out)
    changed = {name for name in after if before.get(name) != after[name]}
    assert changed == {
        OVERRIDES_FILE,
        "grades.csv",
        "report.html",
        f"bo/{RESULTS_FILE}",
        f"bo/{FEEDBACK_FILE}",
        f"bo/{GRADE_FILE}",
    }
    rows = _rows(out)
    assert {k for k in rows["bo"] if rows["bo"][k] != rows_before["bo"][k]} == {"score", "t3", "raw_score", "overrides"}
    assert (rows["bo"]["t3"], rows["bo"]["t3_auto"], rows["bo"]["auto_score"]) == ("10", "0", "8")
    assert "right idea, typo in the spec" in rows["bo"]["overrides"]
    assert rows["ada"] == rows_before["ada"] and rows["cy"] == rows_before["cy"]
    gradescope = json.loads((out / "bo" / RESULTS_FILE).read_text())
    assert gradescope["score"] == 18 and gradescope["extra_data"]["overrides"]["t3"]["auto_score"] == 0
    assert sum(t["score"] for t in gradescope["tests"]) == 18
    grade = json.loads((out / "bo" / GRADE_FILE).read_text())
    assert (grade["score"], grade["auto_score"]) == (18, 8) and grade["tasks"][2]["override"]["grader"] == "ta1"
    assert "right idea, typo in the spec" in (out / "bo" / FEEDBACK_FILE).read_text()
    report = (out / "report.html").read_text()
    assert "1 overrides for 1 students" in report and "right idea, typo in the spec" in report


@pytest.mark.parametrize(
    "args, message",
    [
        (["zed", "t3", "5"], "unknown student 'zed'"),
        (["bo", "t9", "5"], "unknown task 't9'"),
        (["bo", "t3", "13"], "13 points for t3 are outside 0..12"),
        (["bo", "t3", "lots"], "points 'lots' are not a number"),
    ],
)
def test_a_bad_override_is_refused_and_changes_nothing(tmp_path, capsys, args, message):
    out, _ = _graded_class(tmp_path)
    before = _snapshot(out)
    assert main(["override", str(out), *args, "--comment", "x"]) == 2
    assert message in capsys.readouterr().err
    assert _snapshot(out) == before


def test_a_bad_row_already_in_the_file_refuses_new_overrides(tmp_path):
    out, _ = _graded_class(tmp_path)
    (out / OVERRIDES_FILE).write_text(HEADER + "bo,t3,99,hand-edited,ta1\n")
    before = _snapshot(out)
    with pytest.raises(OverrideError, match="line 2: 99 points for t3"):
        record_override(out, "ada", "t3", "5", "fine", "ta1")
    assert _snapshot(out) == before


def test_overrides_survive_a_rerun_and_a_row_added_by_hand_is_applied_by_the_rerun(tmp_path):
    out, folder = _graded_class(tmp_path)
    record_override(out, "bo", "t3", "10", "by command", "ta1")
    options = BatchOptions(lab=LAB_ID, out=out, similarity=False)
    results = run_batch(folder, options)  # nothing left to grade: no kernel, no Dask cluster
    assert results["bo"].tasks[2].score == 10 and _rows(out)["bo"]["t3"] == "10"
    assert not (out / LOG_FILE).exists()  # nothing was graded
    with open(out / OVERRIDES_FILE, "a") as handle:
        handle.write('cy,t8,15,"graded by hand, notebook was fine",ta2,\n')
    run_batch(folder, options)
    rows = _rows(out)
    assert (rows["cy"]["t8"], rows["cy"]["score"], rows["bo"]["t3"]) == ("15", "15", "10")
    assert json.loads((out / "cy" / GRADE_FILE).read_text())["tasks"][7]["override"]["grader"] == "ta2"
    (out / OVERRIDES_FILE).write_text(HEADER + "cy,t8,16,too many,ta2\n")
    with pytest.raises(OverrideError, match="16 points for t8 are outside 0..15"):
        run_batch(folder, options)
