"""Canvas's and Moodle's downloads of all submissions, read per student: ids, late markers (no submission time
taken from the zip's file times), the lab's notebook among several files, a reason for each file that is not
one; no notebook is run."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from synthetic_results import LAB_ID, lab2_result

from autograder.course.collect import collect_submissions
from autograder.course.late import FROM_MTIME, apply_late, build_policy, with_submission_time
from autograder.course.lms_submissions import pick_lab_notebook

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
MOODLE_DOWNLOAD = {  # as mod/assign/classes/downloader.php lays out "Download all submissions"
    "Jane Doe_101_assignsubmission_file/lab2_three_ways.ipynb": NOTEBOOK,
    "Eric Roe_102_assignsubmission_file_/work/lab2_three_ways.ipynb": NOTEBOOK,  # an older Moodle's name, a subfolder
    "Ann Smith_103_assignsubmission_onlinetext/onlinetext.html": "<p>see attached</p>",
    "Bo Lee_104_assignsubmission_file/report.pdf": "%PDF-1.4",
    "Bo Lee_104_assignsubmission_onlinetext/onlinetext.html": "<p>here</p>",
    "Participant_105_assignsubmission_file/a.ipynb": NOTEBOOK,  # blind marking
}


def _zip(files: dict[str, str], path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


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
