"""Canvas's and Moodle's downloads of all submissions, read per student (ids, late markers, the lab's notebook
among several files, a reason for each file that is not one), and the final grades written back as each LMS's
grade import, column by column, filling the LMS's own export; no notebook is run (the graded students' results
are written beforehand, as a batch keeps them)."""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from synthetic_results import LAB_ID, TASK_POINTS, lab2_result

from autograder.cli import main
from autograder.course.adjustments import Adjustments, publish_student, record_override
from autograder.course.batch import BatchOptions, run_batch
from autograder.course.collect import collect_submissions
from autograder.course.gradebook import load_results
from autograder.course.late import FROM_MTIME, apply_late, build_policy, with_submission_time
from autograder.course.lms_gradebook import CANVAS_IDENTITY, MOODLE_COLUMNS, POINTS_POSSIBLE, lms_gradebook_csv
from autograder.course.lms_submissions import LmsError, LmsRoster, LmsStudent, pick_lab_notebook
from autograder.grading import GradeStatus

NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'  # never run here

CANVAS_DOWNLOAD = {  # as Canvas names the files of "Download Submissions" (lib/content_zipper.rb)
    "doejane_12345_678901_lab2_three_ways.ipynb": NOTEBOOK,
    "roeeric_LATE_23456_678902_lab2_three_ways-1.ipynb": NOTEBOOK,  # late, and a resubmission
    "smithann_34567_678903_notes.pdf": "%PDF-1.4",
    "smithann_34567_678904_lab2_three_ways.ipynb": NOTEBOOK,
    "leebo_45678_text.html": "<p>my answers</p>",  # a text entry
    "kimcy_56789_678905_scratch.ipynb": NOTEBOOK,
    "kimcy_56789_678906_draft.ipynb": NOTEBOOK,
    "parkdee_67890_678907_lab2.pdf": "%PDF-1.4",
}
CANVAS_EXPORT = (  # the Gradebook's export, as GradebookExporter writes it (lib/gradebook_exporter.rb)
    "Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (501),Lab 2 three ways (502),Current Score,Final Score\n"
    "    Points Possible,,,,,10.00,50.00,(read only),(read only)\n"
    '"Doe, Jane",12345,s001,jdoe,Section A,9.00,,90.00,90.00\n'
    '"Roe, Eric",23456,s002,eroe,Section A,8.00,,80.00,80.00\n'
    '"Smith, Ann",34567,s003,asmith,Section B,7.00,,70.00,70.00\n'
    '"Lee, Bo",45678,s004,blee,Section B,,,,\n'
    '"Kim, Cy",56789,s005,ckim,Section B,,12.00,,\n'
    '"Student, Test",99999,,,Section A,,,,\n'
)
MOODLE_DOWNLOAD = {  # as mod/assign/classes/downloader.php lays out "Download all submissions"
    "Jane Doe_101_assignsubmission_file/lab2_three_ways.ipynb": NOTEBOOK,
    "Eric Roe_102_assignsubmission_file_/work/lab2_three_ways.ipynb": NOTEBOOK,  # an older Moodle's name, a subfolder
    "Ann Smith_103_assignsubmission_onlinetext/onlinetext.html": "<p>see attached</p>",
    "Bo Lee_104_assignsubmission_file/report.pdf": "%PDF-1.4",
    "Bo Lee_104_assignsubmission_onlinetext/onlinetext.html": "<p>here</p>",
    "Participant_105_assignsubmission_file/a.ipynb": NOTEBOOK,  # blind marking
}
MOODLE_WORKSHEET = (  # the assignment's "Download grading worksheet"
    "Identifier,Full name,Email address,Status,Grade,Maximum grade,Grade can be changed,"
    "Last modified (submission),File submissions,Last modified (grade),Feedback comments\n"
    'Participant 101,Jane Doe,jane@example.edu,Submitted for grading,,10.00,Yes,"Monday, 30 November 2026, 9:00 PM",'
    "lab2_three_ways.ipynb,-,\n"
    'Participant 102,Eric Roe,eric@example.edu,Submitted for grading,,10.00,Yes,"Friday, 4 December 2026, 9:00 AM",'
    "lab2_three_ways.ipynb,-,\n"
    "Participant 103,Ann Smith,ann@example.edu,Submitted for grading,,10.00,Yes,-,,-,\n"
    'Participant 104,Bo Lee,bo@example.edu,Submitted for grading,4.00,10.00,Yes,-,report.pdf,"Tuesday, 1 December '
    '2026, 8:00 AM",Graded by hand\n'
    "Participant 106,Cy Kim,cy@example.edu,No submission,,10.00,Yes,-,,-,\n"
)


def _zip(files: dict[str, str], path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def _table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_canvas_download_is_read_per_student(tmp_path):
    archive = _zip(CANVAS_DOWNLOAD, tmp_path / "submissions.zip")
    found = {s.student: s for s in collect_submissions(archive, LAB_ID, tmp_path / "unpacked")}
    assert sorted(found) == [
        "doejane_12345",
        "kimcy_56789",
        "leebo_45678",
        "parkdee_67890",
        "roeeric_23456",
        "smithann_34567",
    ]
    assert {s: (c.lms.lms_id, c.lms.name, c.lms.late) for s, c in found.items()} == {
        "doejane_12345": ("12345", "doejane", False),
        "kimcy_56789": ("56789", "kimcy", False),
        "leebo_45678": ("45678", "leebo", False),
        "parkdee_67890": ("67890", "parkdee", False),
        "roeeric_23456": ("23456", "roeeric", True),
        "smithann_34567": ("34567", "smithann", False),
    }
    assert found["doejane_12345"].path.name == "doejane_12345_678901_lab2_three_ways.ipynb"
    assert found["roeeric_23456"].path.name == "roeeric_LATE_23456_678902_lab2_three_ways-1.ipynb"
    assert found["smithann_34567"].path.name == "smithann_34567_678904_lab2_three_ways.ipynb"  # not the PDF
    problems = {s: c.problem for s, c in found.items() if c.path is None}
    assert problems == {
        "leebo_45678": "not a notebook: the files sent were text.html (an .ipynb notebook is graded)",
        "parkdee_67890": "not a notebook: the files sent were lab2.pdf (an .ipynb notebook is graded)",
        "kimcy_56789": "2 notebooks and not one alone named for lab2_three_ways: draft.ipynb, scratch.ipynb",
    }
    unpacked = {s.student: (s.path, s.problem, s.lms) for s in collect_submissions(tmp_path / "unpacked", LAB_ID)}
    assert unpacked == {s: (c.path, c.problem, c.lms) for s, c in found.items()}  # the unpacked folder alike
    again = _zip({f"lab2 submissions/{name}": text for name, text in CANVAS_DOWNLOAD.items()}, tmp_path / "again.zip")
    rezipped = {s.student: (s.path.name if s.path else None, s.lms) for s in collect_submissions(again, LAB_ID)}
    assert rezipped == {s: (c.path.name if c.path else None, c.lms) for s, c in found.items()}  # zipped again


def test_moodle_download_is_read_per_student_in_folders_or_flat(tmp_path):
    archive = _zip(MOODLE_DOWNLOAD, tmp_path / "submissions.zip")
    found = {s.student: s for s in collect_submissions(archive, LAB_ID, tmp_path / "unpacked")}
    assert {s: (c.lms.lms, c.lms.lms_id, c.lms.name, c.lms.late) for s, c in found.items()} == {
        "Jane_Doe_101": ("moodle", "101", "Jane Doe", None),
        "Eric_Roe_102": ("moodle", "102", "Eric Roe", None),
        "Ann_Smith_103": ("moodle", "103", "Ann Smith", None),
        "Bo_Lee_104": ("moodle", "104", "Bo Lee", None),
        "Participant_105": ("moodle", "105", "Participant", None),
    }
    assert found["Eric_Roe_102"].path.relative_to(tmp_path / "unpacked").parts == (
        "Eric Roe_102_assignsubmission_file_",
        "work",
        "lab2_three_ways.ipynb",
    )
    assert found["Participant_105"].path.name == "a.ipynb"  # the only notebook, whatever its name
    assert (
        found["Ann_Smith_103"].problem
        == "not a notebook: the files sent were onlinetext.html (an .ipynb notebook is graded)"
    )
    assert found["Bo_Lee_104"].problem == (
        "not a notebook: the files sent were onlinetext.html, report.pdf (an .ipynb notebook is graded)"
    )
    flat = {  # "Download submissions in folders" unticked: the files lie flat, each named for its student
        "Jane Doe_101_assignsubmission_file_lab2_three_ways.ipynb": NOTEBOOK,
        "Eric Roe_102_assignsubmission_file_lab2_three_ways.ipynb": NOTEBOOK,
        "Ann Smith_103_assignsubmission_onlinetext_onlinetext.html": "<p>see attached</p>",
        "Bo Lee_104_assignsubmission_file_report.pdf": "%PDF-1.4",
        "Bo Lee_104_assignsubmission_onlinetext_onlinetext.html": "<p>here</p>",
        "Participant_105_assignsubmission_file_a.ipynb": NOTEBOOK,
    }
    found_flat = {s.student: s for s in collect_submissions(_zip(flat, tmp_path / "flat.zip"), LAB_ID, tmp_path / "f")}
    assert {s: (c.lms.lms_id, c.path is not None) for s, c in found_flat.items()} == {
        "Jane_Doe_101": ("101", True),
        "Eric_Roe_102": ("102", True),
        "Ann_Smith_103": ("103", False),
        "Bo_Lee_104": ("104", False),
        "Participant_105": ("105", True),
    }


@pytest.mark.parametrize(
    "sent, picked, problem",
    [
        (["notes.pdf", "lab2_three_ways-2.ipynb"], "lab2_three_ways-2.ipynb", None),  # a resubmission's name
        (["Lab2 Three Ways (1).ipynb", "scratch.ipynb"], "Lab2 Three Ways (1).ipynb", None),
        (["answers.ipynb"], "answers.ipynb", None),
        (
            ["lab2_three_ways.ipynb", "lab2_three_ways_old.ipynb"],
            None,
            "2 notebooks and not one alone named for lab2_three_ways: lab2_three_ways.ipynb, lab2_three_ways_old.ipynb",
        ),
        ([], None, "not a notebook: the files sent were nothing (an .ipynb notebook is graded)"),
    ],
)
def test_the_lab_notebook_is_picked_among_a_students_files(sent, picked, problem):
    path, reason = pick_lab_notebook([(Path(name), name) for name in sent], LAB_ID)
    assert (path, reason) == (Path(picked) if picked else None, problem)


def test_a_plain_folder_is_not_read_as_an_lms_download(tmp_path):
    for name in ("ada.ipynb", "bo_lee.ipynb", "cy_2_3_x.ipynb"):
        (tmp_path / name).write_text(NOTEBOOK)
    found = {s.student: s for s in collect_submissions(tmp_path, LAB_ID)}
    assert sorted(found) == ["ada", "bo_lee", "cy_2_3_x"] and all(s.lms is None for s in found.values())


def test_an_lms_download_gives_no_submission_time_but_what_the_lms_says(tmp_path):
    """The zip's file times are the download's: none is taken for a submission time, and none invented."""
    found = {
        s.student: s for s in collect_submissions(_zip(CANVAS_DOWNLOAD, tmp_path / "c.zip"), LAB_ID, tmp_path / "c")
    }
    policy = build_policy("2026-12-01T23:59+00:00", "10%/day")
    late, on_time = found["roeeric_23456"], found["doejane_12345"]
    result = with_submission_time(lab2_result(), late.path, late.created_at, late.lms.time_note)
    assert (result.submitted_at, result.submitted_time_source) == (
        None,
        "Canvas marked it LATE; its download holds no submission time",
    )
    assert apply_late(result, policy).late.reason == (
        "the submission time is unknown (Canvas marked it LATE; its download holds no submission time): no late penalty"
    )
    assert with_submission_time(lab2_result(), on_time.path, None, on_time.lms.time_note).submitted_time_source == (
        "Canvas did not mark it late; its download holds no submission time"
    )
    moodle = collect_submissions(_zip(MOODLE_DOWNLOAD, tmp_path / "m.zip"), LAB_ID, tmp_path / "m")
    assert {s.lms.time_note for s in moodle} == {"Moodle's download carries no late marker and no submission time"}
    assert with_submission_time(lab2_result(), on_time.path).submitted_time_source == FROM_MTIME  # a plain file


def _publish_graded(out: Path, students: dict[str, set[str]]) -> None:
    """What a batch keeps of students it graded before: their automatic results, no submission time."""
    for student, passed in students.items():
        publish_student(out, student, lab2_result(passed))


def test_canvas_grades_fill_the_gradebook_export_column_by_column(tmp_path):
    out, archive = tmp_path / "out", _zip(CANVAS_DOWNLOAD, tmp_path / "submissions.zip")
    (tmp_path / "export.csv").write_text("\ufeff" + CANVAS_EXPORT, encoding="utf-8")  # Canvas writes a BOM
    _publish_graded(out, {"doejane_12345": {"t1", "t2"}, "roeeric_23456": {"t1", "t2", "t3"}})
    _publish_graded(out, {"smithann_34567": {"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"}})
    (out / "overrides.csv").write_text("student,task,points,comment,grader\nsmithann_34567,t3,6,half,ta\n")
    options = BatchOptions(
        lab=LAB_ID,
        out=out,
        similarity=False,
        late_policy=build_policy("2026-12-01T23:59+00:00", "10%/day"),
        gradebook="canvas",
        lms_template=tmp_path / "export.csv",
    )
    results = run_batch(archive, options)
    assert {s: r.score for s, r in results.items()} == {
        "doejane_12345": 16,
        "roeeric_23456": 28,
        "smithann_34567": 94,  # 100, t3 overridden from 12 to 6
        "leebo_45678": 0,
        "kimcy_56789": 0,
        "parkdee_67890": 0,
    }
    table = _table((out / "canvas-grades.csv").read_text(encoding="utf-8"))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 2 three ways (502)"]
    assert table[1:] == [
        [POINTS_POSSIBLE, "", "", "", "", "50.00"],
        ["Doe, Jane", "12345", "s001", "jdoe", "Section A", "8"],  # 16 of 100 is 8 of 50 points
        ["Roe, Eric", "23456", "s002", "eroe", "Section A", "14"],
        ["Smith, Ann", "34567", "s003", "asmith", "Section B", "47"],
        ["Lee, Bo", "45678", "s004", "blee", "Section B", "0"],  # a text entry: not a notebook
        ["Kim, Cy", "56789", "s005", "ckim", "Section B", "0"],  # two notebooks, neither named for the lab
        ["Student, Test", "99999", "", "", "Section A", ""],
        ["parkdee", "67890", "", "", "", "0"],  # in the download, not in the export
    ]
    grades = {row["student"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    late = grades["roeeric_23456"]
    assert (late["submitted_at"], late["late_penalty"], late["score"]) == ("", "0", "28")  # no time invented
    assert "Canvas marked it LATE; its download holds no submission time" in late["late"]
    assert "Canvas did not mark it late" in grades["doejane_12345"]["late"]
    assert grades["leebo_45678"]["reason"].startswith("not a notebook: the files sent were text.html")
    report = (out / "report.html").read_text()  # not counted on time: when they came is not known
    assert "0 late, 0 penalised (0 points in all); 0 on time. 6 with no submission time, so no penalty" in report
    record_override(out, "doejane_12345", "t3", "12", "regraded by hand", "ta")  # no download needed
    assert _table((out / "canvas-grades.csv").read_text())[2][-1] == "14"  # (16 + 12) of 100 is 14 of 50


def test_moodle_grades_fill_the_grading_worksheet_column_by_column(tmp_path):
    out, archive = tmp_path / "out", _zip(MOODLE_DOWNLOAD, tmp_path / "submissions.zip")
    (tmp_path / "worksheet.csv").write_text(MOODLE_WORKSHEET)
    _publish_graded(out, {"Jane_Doe_101": {"t1", "t2"}, "Eric_Roe_102": {"t1", "t2", "t3", "t4"}})
    _publish_graded(out, {"Participant_105": {"t1"}})
    options = BatchOptions(
        lab=LAB_ID, out=out, similarity=False, gradebook="moodle", lms_template=tmp_path / "worksheet.csv"
    )
    run_batch(archive, options)
    table = _table((out / "moodle-grades.csv").read_text())
    assert table[0] == _table(MOODLE_WORKSHEET)[0]  # the worksheet's columns, its submission plugin's among them
    expected = _table(MOODLE_WORKSHEET)[1:]
    expected[0][4], expected[1][4], expected[2][4], expected[3][4] = "1.6", "4", "0", "0"  # of 10 points
    assert table[1:] == [*expected, ["Participant 105", "Participant", "", "", "0.8", "10.00", "", "", "", "", ""]]
    grades = {row["student"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    assert grades["Jane_Doe_101"]["submitted_at"] == ""  # the zip's file times are the download's


def test_without_a_template_the_lms_columns_are_written_and_the_unknown_left_blank(tmp_path):
    canvas_out, moodle_out = tmp_path / "canvas", tmp_path / "moodle"
    _publish_graded(canvas_out, {"doejane_12345": {"t1", "t2"}, "roeeric_23456": {"t1"}, "smithann_34567": set()})
    run_batch(
        _zip(CANVAS_DOWNLOAD, tmp_path / "c.zip"),
        BatchOptions(lab=LAB_ID, out=canvas_out, similarity=False, gradebook="canvas"),
    )
    canvas = _table((canvas_out / "canvas-grades.csv").read_text())
    assert (
        canvas[0] == [*CANVAS_IDENTITY, LAB_ID] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", LAB_ID]
    )
    assert canvas[1] == [POINTS_POSSIBLE, "", "", "", "", "100"]
    assert canvas[2:] == [  # the batch's order of students; Canvas matches the rows by ID
        ["doejane", "12345", "", "", "", "16"],
        ["kimcy", "56789", "", "", "", "0"],
        ["leebo", "45678", "", "", "", "0"],
        ["parkdee", "67890", "", "", "", "0"],
        ["roeeric", "23456", "", "", "", "8"],
        ["smithann", "34567", "", "", "", "0"],
    ]
    _publish_graded(moodle_out, {"Jane_Doe_101": {"t1", "t2"}, "Eric_Roe_102": set(), "Participant_105": set()})
    run_batch(
        _zip(MOODLE_DOWNLOAD, tmp_path / "m.zip"),
        BatchOptions(lab=LAB_ID, out=moodle_out, similarity=False, gradebook="moodle"),
    )
    moodle = _table((moodle_out / "moodle-grades.csv").read_text())
    assert (
        moodle[0]
        == MOODLE_COLUMNS
        == [
            "Identifier",
            "Full name",
            "Email address",
            "Status",
            "Grade",
            "Maximum grade",
            "Grade can be changed",
            "Last modified (submission)",
            "Last modified (grade)",
            "Feedback comments",
        ]
    )
    assert moodle[1:] == [
        ["Participant 103", "Ann Smith", "", "", "0", "100.00", "", "", "", ""],
        ["Participant 104", "Bo Lee", "", "", "0", "100.00", "", "", "", ""],
        ["Participant 102", "Eric Roe", "", "", "0", "100.00", "", "", "", ""],
        ["Participant 101", "Jane Doe", "", "", "16", "100.00", "", "", "", ""],
        ["Participant 105", "Participant", "", "", "0", "100.00", "", "", "", ""],
    ]


def test_the_grade_is_the_final_score_and_a_grading_fault_gives_none():
    student = LmsStudent("canvas", "12345", "doejane")
    penalised = replace(lab2_result({"t1", "t2", "t3"}), submitted_at="2026-12-02T12:00:00+00:00")
    policy = build_policy("2026-12-01T23:59+00:00", "10%/day")
    final = Adjustments(TASK_POINTS, {}, policy).apply("doejane_12345", penalised)
    assert (final.raw_score, final.score) == (28, 25.2)  # a day late: -10%
    roster = LmsRoster({"doejane_12345": student}, "canvas", CANVAS_EXPORT)
    cell = _table(lms_gradebook_csv(roster, LAB_ID, {"doejane_12345": final}))[2][-1]
    assert cell == "12.6"  # 25.2 of 100 as 50 points: the final score, not the raw 28
    fault = replace(lab2_result(set()), status=GradeStatus.GRADER_ERROR, reason="worker lost")
    roster = LmsRoster({"kimcy_56789": LmsStudent("canvas", "56789", "kimcy")}, "canvas", CANVAS_EXPORT)
    assert _table(lms_gradebook_csv(roster, LAB_ID, {"kimcy_56789": fault}))[6][-1] == "12.00"  # left as it was


@pytest.mark.parametrize(
    "files, options, message",
    [
        (CANVAS_DOWNLOAD, {"lms_template": "export.csv"}, "--lms-template needs --gradebook canvas or moodle"),
        (CANVAS_DOWNLOAD, {"gradebook": "moodle"}, "these submissions are not Moodle's download"),
        (MOODLE_DOWNLOAD, {"gradebook": "moodle", "lms_template": "export.csv"}, "lacks Identifier, Full name"),
        (
            CANVAS_DOWNLOAD,
            {"gradebook": "canvas", "lms_template": "two.csv"},
            r"cannot tell which assignment is lab2_three_ways: the export's assignments are Lab 1 \(501\), Lab 3",
        ),
        (CANVAS_DOWNLOAD, {"gradebook": "canvas", "lms_template": "missing.csv"}, "missing.csv: cannot be read"),
    ],
)
def test_options_that_do_not_fit_are_refused_before_anything_is_graded(tmp_path, files, options, message):
    (tmp_path / "export.csv").write_text(CANVAS_EXPORT)
    (tmp_path / "two.csv").write_text(CANVAS_EXPORT.replace("Lab 2 three ways (502)", "Lab 3 (503)"))
    template = {"lms_template": tmp_path / options["lms_template"]} if "lms_template" in options else {}
    batch = BatchOptions(lab=LAB_ID, out=tmp_path / "out", similarity=False, **{**options, **template})
    with pytest.raises(LmsError, match=message):
        run_batch(_zip(files, tmp_path / "s.zip"), batch)
    assert load_results(tmp_path / "out") == {}


def test_the_command_line_takes_the_lms_options(tmp_path, capsys):
    archive = _zip(CANVAS_DOWNLOAD, tmp_path / "s.zip")
    args = ["batch", str(archive), "--lab", LAB_ID, "--out", str(tmp_path / "out"), "--no-sandbox"]
    assert main([*args, "--lms-template", str(tmp_path / "x.csv")]) == 2
    assert "--lms-template needs --gradebook canvas or moodle" in capsys.readouterr().err
    assert main([*args, "--gradebook", "moodle"]) == 2
    assert "not Moodle's download" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--gradebook", "blackboard"])
    assert "invalid choice: 'blackboard'" in capsys.readouterr().err
