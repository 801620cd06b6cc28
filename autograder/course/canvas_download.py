"""Canvas's "Download Submissions" zip: one file per file a student submitted, named for the student.

Canvas names each file ``NAME[_LATE]_USERID_FILEID_ORIGINAL`` (``doejane_LATE_12345_678901_lab2.ipynb``):
the student's sortable name, lower case with everything but letters, digits and ``_`` dropped; ``LATE``
when Canvas counts the submission late; the Canvas user id (the gradebook's ``ID`` column); the id of the
uploaded file; and the name the student uploaded it under, with Canvas's ``-1``, ``-2``... before the
extension when a file of that name was there already (a resubmission). A text entry is
``NAME[_LATE]_USERID_text.html``, a website URL ``..._link.html``; with anonymous grading the name and user
id give way to ``anon_ANONYMOUSID``. Every file in the zip is stamped with the time of the download, not
of the submission, and no submission time is in the names: LATE is all Canvas says about lateness.

Sources: the code that names the files, ``ContentZipper#get_filename`` and ``#add_upload_submission`` in
instructure/canvas-lms ``lib/content_zipper.rb``, and ``Attachment.make_unique_filename`` (the ``-1``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autograder.course.lms_roster import LmsStudent

_LATE = r"(?:(?P<late>LATE)_)?"
_UPLOAD = re.compile(rf"(?P<name>[^/]*?)_{_LATE}(?P<user>\d+)_(?P<file>\d+)_(?P<original>.+)")
_ENTRY = re.compile(rf"(?P<name>[^/]*?)_{_LATE}(?P<user>\d+)_(?P<original>text|link)\.html")
_ANONYMOUS = re.compile(rf"{_LATE}anon_(?P<anon>[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*)_(?:(?P<file>\d+)_)?(?P<original>.+)")
_UNIQUE_SUFFIX = re.compile(r"-(?:\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


@dataclass(frozen=True)
class CanvasFile:
    """One file of the download: whose it is and the name the student gave it."""

    path: Path
    key: str  # the student's id in the batch: NAME_USERID (anon_ANONYMOUSID under anonymous grading)
    student: LmsStudent
    original: str  # the file's name as uploaded, Canvas's -1 suffix kept


def read_canvas_name(path: Path) -> CanvasFile | None:
    """The student and original name a file of Canvas's download carries, or None if it is not named so."""
    name = path.name
    anonymous = _ANONYMOUS.fullmatch(name)
    if anonymous:
        key = f"anon_{anonymous['anon']}"
        student = LmsStudent("canvas", None, key, anonymous["late"] is not None)
        return CanvasFile(path, key, student, anonymous["original"])
    match = _UPLOAD.fullmatch(name) or _ENTRY.fullmatch(name)
    if match is None:
        return None
    original = match["original"] if "file" in match.groupdict() else f"{match['original']}.html"
    key = f"{match['name']}_{match['user']}" if match["name"] else match["user"]
    return CanvasFile(
        path, key, LmsStudent("canvas", match["user"], match["name"], match["late"] is not None), original
    )


def uploaded_stem(original: str) -> str:
    """The name a student uploaded, without its extension and Canvas's ``-1`` (or ``-<uuid>``) suffix."""
    return _UNIQUE_SUFFIX.sub("", Path(original).stem)
