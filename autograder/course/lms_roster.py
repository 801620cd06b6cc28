"""Who each student is in the course's LMS, kept in ``OUT/lms_roster.json``.

A Canvas or Moodle download names each student by the LMS's own id, which is what the LMS's grade import
matches rows by. The batch reads it from the download (lms_submissions.py) and keeps it in OUT with the LMS
whose CSV to write and that LMS's own export to fill, so that every later write of the grades (another
batch, an override) rewrites the LMS's CSV too, without the download.
"""

from __future__ import annotations

import json
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
    data = {
        "students": {key: asdict(student) for key, student in sorted(roster.students.items())},
        "gradebook": roster.gradebook,
        "template": roster.template,
    }
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
