"""A class from an LMS's download: Canvas's files or Moodle's folders grouped per student, and the notebook
of the lab picked among each student's files (docs/instructors.md says how each LMS names them).

A folder is read as an LMS's download when at least half of what it holds is named as that LMS names a
submission; anything else in it is a submission of its own, as in a plain folder. Both LMSs stamp every
file with the time of the download, so no submission time comes from here: only Canvas's LATE marker.

Sources: Canvas's ``ContentZipper#get_filename`` and ``#add_upload_submission`` in instructure/canvas-lms
``lib/content_zipper.rb``, and ``Attachment.make_unique_filename`` (the ``-1``); Moodle's
``mod/assign/classes/downloader.php`` (``get_student_prefix``, ``load_submissionplugin_filelist``) and
its "Download submissions in folders" option (``downloadasfolders_help``).

Who each student is in the LMS (what its grade import matches rows by) is kept in ``OUT/lms_roster.json``,
so that every later write of the grades rewrites the LMS's CSV too, without the download.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.grading import write_atomically

ROSTER_FILE = "lms_roster.json"
NO_TIME = "its download holds no submission time"  # both LMSs stamp each file with the download's time


class LmsError(ValueError):
    """An LMS option that does not fit the submissions or a template that is not the LMS's export."""


@dataclass(frozen=True)
class LmsStudent:
    """One student as the LMS's download names them."""

    lms: str  # "canvas" or "moodle"
    lms_id: str | None  # Canvas's user id, Moodle's participant number; None when the download names none
    name: str  # as the download spells it
    late: bool | None = None  # Canvas's LATE marker; None where the download carries no marker (Moodle)

    @property
    def time_note(self) -> str:
        """Where the late policy's submission time comes from for this student: the LMS, which says no time."""
        if self.lms == "canvas":
            marked = "Canvas marked it LATE" if self.late else "Canvas did not mark it late"
            return f"{marked}; {NO_TIME}"
        return "Moodle's download carries no late marker and no submission time"


@dataclass(frozen=True)
class LmsRoster:
    students: dict[str, LmsStudent] = field(default_factory=dict)  # the batch's student id -> the LMS's
    gradebook: str | None = None  # the LMS whose import CSV is written ("canvas", "moodle"), if any
    template: str | None = None  # that LMS's own export (gradebook or grading worksheet), as text


def save_roster(out: Path, roster: LmsRoster) -> None:
    data = asdict(roster) | {"students": {key: asdict(student) for key, student in sorted(roster.students.items())}}
    write_atomically(out / ROSTER_FILE, json.dumps(data, indent=1) + "\n")


def load_roster(out: Path) -> LmsRoster | None:
    path = out / ROSTER_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        students = {key: LmsStudent(**value) for key, value in data["students"].items()}
        return LmsRoster(students, data.get("gradebook"), data.get("template"))
    except (ValueError, TypeError, KeyError) as exc:
        raise LmsError(f"{path} cannot be read ({exc}); run the batch on the LMS's download again") from None


def squash(text: str) -> str:
    """``text`` as a name for the lab is matched in: lower case, letters and digits only."""
    return "".join(c for c in text.lower() if c.isalnum())


_LATE = r"(?:(?P<late>LATE)_)?"
_UPLOAD = re.compile(rf"(?P<name>[^/]*?)_{_LATE}(?P<user>\d+)_(?P<file>\d+)_(?P<original>.+)")
_ENTRY = re.compile(rf"(?P<name>[^/]*?)_{_LATE}(?P<user>\d+)_(?P<original>text|link)\.html")
_ANONYMOUS = re.compile(rf"{_LATE}anon_(?P<anon>[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*)_(?:(?P<file>\d+)_)?(?P<original>.+)")
_UNIQUE_SUFFIX = re.compile(r"-(?:\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
_FOLDER = re.compile(r"(?P<name>[^/]*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_?")
_FLAT = re.compile(r"(?P<name>[^/]*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<original>.+)")


@dataclass(frozen=True)
class LmsEntry:
    """A file or folder of the download: whose it is, and its files with the names the student gave them."""

    key: str  # the student's id in the batch: NAME_USERID (anon_ANONYMOUSID) on Canvas, FULL NAME_PARTICIPANT on Moodle
    student: LmsStudent
    files: tuple[tuple[Path, str], ...]


def read_canvas_name(path: Path) -> LmsEntry | None:
    """The student and original name (Canvas's ``-1`` kept) a file of Canvas's download carries, or None."""
    if not path.is_file():
        return None
    anonymous = _ANONYMOUS.fullmatch(path.name)
    if anonymous:
        key = f"anon_{anonymous['anon']}"
        return LmsEntry(
            key, LmsStudent("canvas", None, key, anonymous["late"] is not None), ((path, anonymous["original"]),)
        )
    match = _UPLOAD.fullmatch(path.name) or _ENTRY.fullmatch(path.name)
    if match is None:
        return None
    original = match["original"] if "file" in match.groupdict() else f"{match['original']}.html"
    key = f"{match['name']}_{match['user']}" if match["name"] else match["user"]
    return LmsEntry(
        key, LmsStudent("canvas", match["user"], match["name"], match["late"] is not None), ((path, original),)
    )


def read_moodle_entry(path: Path) -> LmsEntry | None:
    """The student a folder or file of Moodle's download belongs to, with its files; None if not named so."""
    match = _FOLDER.fullmatch(path.name) if path.is_dir() else _FLAT.fullmatch(path.name)
    if match is None:
        return None
    if path.is_dir():
        files = tuple(
            (p, p.name) for p in sorted(path.rglob("*")) if p.is_file() and ".ipynb_checkpoints" not in p.parts
        )
    else:
        files = ((path, match["original"]),)
    return LmsEntry(
        f"{match['name']}_{match['participant']}", LmsStudent("moodle", match["participant"], match["name"]), files
    )


READERS = {"moodle": read_moodle_entry, "canvas": read_canvas_name}  # Moodle's first, when both could be


def pick_lab_notebook(files: list[tuple[Path, str]], lab: str) -> tuple[Path | None, str | None]:
    """The notebook to grade among a student's files (path, name as sent), or None and the reason."""
    notebooks = [(path, name) for path, name in files if name.lower().endswith(".ipynb")]
    named = [(path, name) for path, name in notebooks if squash(lab) in squash(_UNIQUE_SUFFIX.sub("", Path(name).stem))]
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
    counts = {lms: sum(read(entry) is not None for entry in entries) for lms, read in READERS.items()}
    return next((lms for lms, count in counts.items() if entries and 2 * count >= len(entries)), None)


def lms_submissions(
    entries: list[Path],
) -> tuple[dict[str, tuple[LmsStudent, list[tuple[Path, str]]]], list[Path]] | None:
    """A folder's ``entries`` as an LMS's download: (each student's files by their id in the batch, the other
    entries), or None."""
    lms = lms_of(entries)
    if lms is None:
        return None
    found = {entry: READERS[lms](entry) for entry in entries}
    students: dict[str, tuple[LmsStudent, list[tuple[Path, str]]]] = {}
    for entry in found.values():
        if entry is not None:
            student, files = students.setdefault(entry.key, (entry.student, []))
            if entry.student.late and not student.late:  # one file marked LATE marks the submission
                students[entry.key] = (entry.student, files)
            files.extend(entry.files)
    return students, [entry for entry, read in found.items() if read is None]
