"""Late penalties: a table of cases, parsing the policy, where the submission time comes from, and the
penalty in the gradebook, the student's page and after an override."""

from __future__ import annotations

import csv
import io
import os
import shutil
import zipfile
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from synthetic_results import TASK_POINTS, lab2_result

from autograder.cli import main
from autograder.course.adjustments import Adjustments, Override, publish_student, publish_summaries
from autograder.course.collect import collect_submissions
from autograder.course.gradebook import gradebook_csv, load_results
from autograder.course.late import (
    EXTENSIONS_FILE,
    FROM_METADATA,
    FROM_MTIME,
    LatePolicy,
    LatePolicyError,
    apply_late,
    build_policy,
    late_penalty,
    load_policy,
    parse_due,
    read_extensions,
    save_policy,
    submission_time,
)
from autograder.grading.feedback import feedback_html

DUE = datetime(2026, 12, 1, 23, 59, tzinfo=UTC)
HOUR, MINUTE, DAY = timedelta(hours=1), timedelta(minutes=1), timedelta(days=1)


@pytest.mark.parametrize(
    "case, submitted, policy, percent",
    [
        ("early", DUE - 3 * HOUR, ("10%/day", "100%", "0"), 0),
        ("exactly on the due time", DUE, ("10%/day", "100%", "0"), 0),
        ("a minute late, no grace", DUE + MINUTE, ("10%/day", "100%", "0"), 10),
        ("in the grace period", DUE + 10 * MINUTE, ("10%/day", "100%", "15m"), 0),
        ("at the end of the grace period", DUE + 15 * MINUTE, ("10%/day", "100%", "15m"), 0),
        ("just past the grace period", DUE + 16 * MINUTE, ("10%/day", "100%", "15m"), 10),
        ("one day late", DUE + DAY, ("10%/day", "100%", "0"), 10),
        ("a day and a minute late", DUE + DAY + MINUTE, ("10%/day", "100%", "0"), 20),
        ("three days late", DUE + 3 * DAY, ("10%/day", "100%", "2h"), 30),
        ("capped", DUE + 9 * DAY, ("10%/day", "50%", "0"), 50),
        ("capped at everything", DUE + 30 * DAY, ("10%/day", "100%", "0"), 100),
        ("per hour", DUE + 90 * MINUTE, ("2%/hour", "100%", "0"), 4),
        ("reported only", DUE + 2 * DAY, ("0%/day", "100%", "0"), 0),
    ],
)
def test_late_penalties(case, submitted, policy, percent):
    rate, cap, grace = policy
    penalty = late_penalty(build_policy(DUE.isoformat(), rate, cap, grace), submitted, FROM_METADATA, 80.0)
    assert penalty.percent == percent, penalty.reason
    assert penalty.points == pytest.approx(80.0 * percent / 100)
    assert penalty.is_late == (submitted > DUE)
    assert FROM_METADATA in penalty.reason
    if percent:
        assert f"−{percent:g}%" in penalty.reason and f"−{80 * percent / 100:g} points" in penalty.reason
    if "capped" == case:
        assert "(the cap)" in penalty.reason
    if case == "in the grace period":
        assert "within the 15 min grace period: no penalty" in penalty.reason


def test_the_penalty_is_taken_from_the_score_after_overrides():
    policy = build_policy(DUE.isoformat(), "10%/day")
    result = replace(
        lab2_result({"t1", "t2"}), submitted_at=(DUE + 2 * HOUR).isoformat(), submitted_time_source=FROM_MTIME
    )
    adjustments = Adjustments(TASK_POINTS, {"ada": {"t3": Override("ada", "t3", 12.0, "ok", "ta")}}, policy)
    final = adjustments.apply("ada", result)
    assert (final.auto_score, final.raw_score, final.penalty, final.score) == (16, 28, 2.8, 25.2)
    row = next(csv.DictReader(io.StringIO(gradebook_csv({"ada": final}, list(TASK_POINTS)))))
    assert (row["raw_score"], row["late_penalty"], row["score"], row["auto_score"]) == ("28", "2.8", "25.2", "16")
    assert "2 h late" in row["late"] and FROM_MTIME in row["late"]
    page = feedback_html(final, "ada")
    assert "id='late'" in page and "Score before the penalty: 28" in page and "<span id='score'>25.2</span>" in page
    assert adjustments.apply("ada", final) == final  # applying again changes nothing
    on_time = apply_late(replace(result, submitted_at=(DUE - HOUR).isoformat()), policy)
    assert on_time.penalty == 0 and "id='late'" not in feedback_html(on_time, "ada")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: parse_due("next friday"), "expected a date and time like 2026-12-01T23:59"),
        (lambda: build_policy("2026-12-01T23:59", "10 percent"), "expected a percent per day or hour"),
        (lambda: build_policy("2026-12-01T23:59", "10%/week"), "expected a percent per day or hour"),
        (lambda: build_policy("2026-12-01T23:59", "10%/day", "150%"), "between 0% and 100%"),
        (lambda: build_policy("2026-12-01T23:59", "10%/day", "50%", "a while"), "a duration like 15m"),
    ],
)
def test_a_bad_policy_is_refused_with_what_was_expected(call, message):
    with pytest.raises(LatePolicyError, match=message):
        call()


def test_a_due_date_without_an_offset_is_local_time_and_the_policy_is_saved(tmp_path):
    due = parse_due("2026-12-01T23:59")
    assert due.tzinfo is not None and due.replace(tzinfo=None) == datetime(2026, 12, 1, 23, 59)
    policy = build_policy("2026-12-01T23:59-08:00", "10%/day", "50%", "1h")
    save_policy(tmp_path, policy)
    assert load_policy(tmp_path) == policy
    assert policy.grace_seconds == 3600 and policy.due.utcoffset() == -8 * HOUR
    save_policy(tmp_path, None)
    assert load_policy(tmp_path) is None


def test_submission_time_from_gradescope_metadata_else_the_file(tmp_path):
    path = tmp_path / "a.ipynb"
    path.write_text("{}")
    stamp = (DUE + HOUR).timestamp()
    os.utime(path, (stamp, stamp))
    assert submission_time(path) == (DUE + HOUR, FROM_MTIME)
    created = yaml.safe_load(":created_at: 2026-12-01 15:45:12.345678000 -08:00\n")[":created_at"]
    moment, source = submission_time(path, created)
    assert source == FROM_METADATA and moment == datetime(2026, 12, 1, 23, 45, 12, 345678, tzinfo=UTC)
    nanoseconds = submission_time(path, "2026-12-02T01:00:00.123456789Z")[0]
    assert nanoseconds == DUE + 61 * MINUTE + timedelta(microseconds=123456)
    assert submission_time(None) == (None, None)


def test_collect_reads_created_at_and_a_zip_keeps_file_times(tmp_path):
    export = tmp_path / "export"
    for folder in ("submission_1", "submission_2"):
        (export / folder).mkdir(parents=True)
        (export / folder / "lab.ipynb").write_text("{}")
    (export / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :sid: s1\n  :created_at: 2026-12-02 01:00:00.000000000 +00:00\n"
        "submission_2:\n  :submitters:\n  - :sid: s2\n"
    )
    found = {s.student: s for s in collect_submissions(export, "lab")}
    assert submission_time(found["s1"].path, found["s1"].created_at) == (DUE + 61 * MINUTE, FROM_METADATA)
    assert submission_time(found["s2"].path, found["s2"].created_at)[1] == FROM_MTIME
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(zipfile.ZipInfo("ada.ipynb", date_time=(2026, 12, 1, 12, 30, 0)), "{}")
    (ada,) = collect_submissions(archive, "lab", tmp_path / "unpacked")
    assert datetime.fromtimestamp(ada.path.stat().st_mtime) == datetime(2026, 12, 1, 12, 30)


def test_batch_refuses_a_partial_policy(tmp_path, capsys):
    args = ["batch", str(tmp_path), "--lab", "lab2_three_ways", "--out", str(tmp_path / "out"), "--no-sandbox"]
    assert main(args + ["--due", "2026-12-01T23:59"]) == 2
    assert "--due needs --late-penalty" in capsys.readouterr().err
    assert main(args + ["--late-penalty", "10%/day"]) == 2
    assert "need --due" in capsys.readouterr().err
    assert main(args + ["--due", "soon", "--late-penalty", "10%/day"]) == 2
    assert "expected a date and time" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _rows_of(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}


def test_a_policy_given_to_a_rerun_applies_to_saved_results_and_stays(tmp_path):
    from autograder.authoring.known_grades import make_submission
    from autograder.course.batch import BatchOptions, run_batch
    from autograder.lab import load_lab

    lab, out, folder = load_lab("lab2_three_ways"), tmp_path / "out", tmp_path / "class"
    for student, late in (("ada", False), ("bo", True)):
        path = make_submission(lab, {}, folder / f"{student}.ipynb")
        stamp = (DUE + (DAY if late else -DAY)).timestamp()
        os.utime(path, (stamp, stamp))
        result = replace(
            lab2_result({"t1", "t2"}),
            submitted_at=datetime.fromtimestamp(stamp).astimezone().isoformat(),
            submitted_time_source=FROM_MTIME,
        )
        publish_student(out, student, result)
    publish_summaries(out, lab.id, list(TASK_POINTS), load_results(out))
    ada_page = (out / "ada" / "feedback.html").read_text()
    policy = LatePolicy(DUE, 10.0, "day", 100.0, 0.0)
    run_batch(folder, BatchOptions(lab=lab.id, out=out, late_policy=policy, similarity=False))
    rows = {r["student"]: r for r in csv.DictReader(open(out / "grades.csv"))}
    assert (rows["bo"]["raw_score"], rows["bo"]["late_penalty"], rows["bo"]["score"]) == ("16", "1.6", "14.4")
    assert (rows["ada"]["late_penalty"], rows["ada"]["score"]) == ("0", "16")
    assert rows["ada"]["late"].startswith("on time")
    assert "id='late'" in (out / "bo" / "feedback.html").read_text()
    assert (out / "ada" / "feedback.html").read_text() == ada_page  # on time: the page says nothing new
    report = (out / "report.html").read_text()
    assert "1 late, 1 penalised (1.6 points in all); 1 on time." in report
    run_batch(folder, BatchOptions(lab=lab.id, out=out, similarity=False))  # the saved policy still applies
    assert load_results(out)["bo"].score == 14.4
    (out / EXTENSIONS_FILE).write_text("student,due,comment\nbo,2026-12-05T12:00+00:00,family emergency\n")
    run_batch(folder, BatchOptions(lab=lab.id, out=out, similarity=False))
    assert load_results(out)["bo"].score == 16 and "family emergency" in _rows_of(out)["bo"]["late"]
    run_batch(folder, BatchOptions(lab=lab.id, out=out, drop_late_policy=True, similarity=False))
    assert load_results(out)["bo"].score == 16 and load_policy(out) is None
    shutil.rmtree(folder)


def test_an_extension_moves_one_students_due_date(tmp_path):
    (tmp_path / EXTENSIONS_FILE).write_text("student,due,comment\nbo,2026-12-03T23:59+00:00,illness\n")
    extensions = read_extensions(tmp_path, {"ada", "bo"})
    policy = build_policy(DUE.isoformat(), "10%/day")
    result = replace(
        lab2_result({"t1", "t2"}), submitted_at=(DUE + 2 * DAY).isoformat(), submitted_time_source=FROM_METADATA
    )
    assert apply_late(result, policy).penalty == 3.2  # two days late: 20% of 16
    extended = apply_late(result, policy, extensions["bo"])
    assert extended.penalty == 0 and extended.late.reason.startswith(
        "due date extended to 2026-12-03T23:59+00:00 (illness); on time"
    )
    adjustments = Adjustments(TASK_POINTS, {}, policy, extensions)
    assert adjustments.apply("bo", result).penalty == 0 and adjustments.apply("ada", result).penalty == 3.2


def test_a_bad_extension_is_refused_naming_the_line(tmp_path):
    (tmp_path / EXTENSIONS_FILE).write_text("student,due,comment\nzed,2026-12-03T23:59,x\nbo,tomorrow,y\n")
    with pytest.raises(LatePolicyError) as error:
        read_extensions(tmp_path, {"ada", "bo"})
    assert "line 2: unknown student 'zed'" in str(error.value)
    assert "line 3: due 'tomorrow': expected a date and time" in str(error.value)
