"""Moodle's "Download all submissions" zip: a folder per student and submission plugin, files inside.

Moodle names each folder ``FULL NAME_PARTICIPANT_assignsubmission_PLUGIN`` (``Jane Doe_12345_
assignsubmission_file``; older versions end it with ``_``): the student's full name with each ``_``
made a space (``Participant`` under blind marking), the participant number the grading worksheet's
``Identifier`` column carries (``Participant 12345``), and the plugin whose files it holds (``file`` for
uploads, with the student's own subfolders and file names kept; ``onlinetext`` for an online text, as
``onlinetext.html``). With "Download submissions in folders" unticked, the files lie flat, each named
``FULL NAME_PARTICIPANT_assignsubmission_PLUGIN_FILENAME``. The download carries no late marker and no
submission time: its zip stamps every file with the time of the download.

Sources: ``mod/assign/classes/downloader.php`` in moodle/moodle (``get_student_prefix``,
``load_submissionplugin_filelist``), the assignment's "Download submissions in folders" option
(``downloadasfolders_help`` in ``mod/assign/lang/en/assign.php``), and MoodleDocs' "Assignment settings"
(https://docs.moodle.org/401/en/index.php?title=Assignment_settings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autograder.course.lms_roster import LmsStudent

_FOLDER = re.compile(r"(?P<name>[^/]*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_?")
_FLAT = re.compile(r"(?P<name>[^/]*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<original>.+)")


@dataclass(frozen=True)
class MoodleEntry:
    """A folder (or, laid flat, a file) of the download: whose it is, and its files with their names."""

    key: str  # the student's id in the batch: FULL NAME_PARTICIPANT
    student: LmsStudent
    files: tuple[tuple[Path, str], ...]  # each file and the name the student gave it


def read_moodle_entry(path: Path) -> MoodleEntry | None:
    """The student a folder or file of Moodle's download belongs to, with its files; None if not named so."""
    match = _FOLDER.fullmatch(path.name) if path.is_dir() else _FLAT.fullmatch(path.name)
    if match is None:
        return None
    student = LmsStudent("moodle", match["participant"], match["name"])
    if path.is_dir():
        files = tuple(
            (p, p.name) for p in sorted(path.rglob("*")) if p.is_file() and ".ipynb_checkpoints" not in p.parts
        )
    else:
        files = ((path, match["original"]),)
    return MoodleEntry(f"{match['name']}_{match['participant']}", student, files)
