"""A class from an LMS's download: Canvas's files or Moodle's folders grouped per student, and the notebook
of the lab picked among each student's files.

A folder is read as an LMS's download when at least half of what it holds is named as that LMS names a
submission (canvas_download.py, moodle_download.py); anything else in it is a submission of its own, as
in a plain folder. A student who sent several files is graded on the notebook named for the lab, else
on their only notebook; with none, or several and none named for the lab, the row says which files came.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.course.canvas_download import CanvasFile, read_canvas_name, uploaded_stem
from autograder.course.lms_roster import LmsStudent
from autograder.course.moodle_download import MoodleEntry, read_moodle_entry


@dataclass(frozen=True)
class LmsSubmission:
    key: str  # the student's id in the batch
    student: LmsStudent
    path: Path | None  # the notebook to grade, or None and ``problem`` says why
    problem: str | None


def _matches(name: str, lab: str) -> bool:
    squash = lambda text: "".join(c for c in text.lower() if c.isalnum())  # noqa: E731
    return squash(lab) in squash(name)


def pick_lab_notebook(files: list[tuple[Path, str]], lab: str) -> tuple[Path | None, str | None]:
    """The notebook to grade among a student's files (path, name as sent), or None and the reason."""
    notebooks = [(path, name) for path, name in files if name.lower().endswith(".ipynb")]
    named = [(path, name) for path, name in notebooks if _matches(uploaded_stem(name), lab)]
    if len(named) == 1:
        return named[0][0], None
    if len(notebooks) == 1:
        return notebooks[0][0], None
    sent = ", ".join(sorted(name for _, name in files)) or "nothing"
    if not notebooks:
        return None, f"not a notebook: the files sent were {sent} (an .ipynb notebook is graded)"
    return None, f"{len(notebooks)} notebooks and not one alone named for {lab}: {sent}"


def lms_of(entries: list[Path]) -> str | None:
    """Which LMS's download ``entries`` (a folder's contents) are: "moodle", "canvas" or None."""
    moodle = sum(read_moodle_entry(entry) is not None for entry in entries)
    canvas = sum(entry.is_file() and read_canvas_name(entry) is not None for entry in entries)
    if entries and 2 * moodle >= len(entries):
        return "moodle"
    return "canvas" if entries and 2 * canvas >= len(entries) else None


def lms_submissions(entries: list[Path], lab: str) -> tuple[str, list[LmsSubmission], list[Path]] | None:
    """``entries`` (a folder's contents) read as Canvas's or Moodle's download: (the LMS, one submission per
    student, the entries not named as that LMS names submissions); None when it is neither's."""
    lms = lms_of(entries)
    if lms == "moodle":
        moodle = {entry: read_moodle_entry(entry) for entry in entries}
        return lms, _moodle(moodle, lab), [entry for entry, found in moodle.items() if found is None]
    if lms == "canvas":
        canvas = {entry: read_canvas_name(entry) if entry.is_file() else None for entry in entries}
        return lms, _canvas(canvas, lab), [entry for entry, found in canvas.items() if found is None]
    return None


def _moodle(found: dict[Path, MoodleEntry | None], lab: str) -> list[LmsSubmission]:
    students: dict[str, tuple[LmsStudent, list[tuple[Path, str]]]] = {}
    for entry in found.values():
        if entry is not None:
            students.setdefault(entry.key, (entry.student, []))[1].extend(entry.files)
    return [LmsSubmission(key, student, *pick_lab_notebook(files, lab)) for key, (student, files) in students.items()]


def _canvas(found: dict[Path, CanvasFile | None], lab: str) -> list[LmsSubmission]:
    students: dict[str, tuple[LmsStudent, list[tuple[Path, str]]]] = {}
    for file in found.values():
        if file is not None:
            student, files = students.setdefault(file.key, (file.student, []))
            if file.student.late and not student.late:  # one file marked LATE marks the submission
                students[file.key] = (file.student, files)
            files.append((file.path, file.original))
    return [LmsSubmission(key, student, *pick_lab_notebook(files, lab)) for key, (student, files) in students.items()]
