"""Finding the submissions of a class: a folder of notebooks, ``STUDENT/*.ipynb`` folders, a zip of
either, Gradescope's export (``submission_<id>/`` folders and ``submission_metadata.yml``), or Canvas's or
Moodle's download (lms_submissions.py)."""

from __future__ import annotations

import os
import re
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder.course.lms_submissions import (
    LmsStudent,
    lms_of,
    lms_submissions,
    pick_lab_notebook,
    read_moodle_entry,
)
from autograder.run import claim

MAX_ZIP_BYTES = 2 * 2**30
IGNORED = {"submission_metadata.yml", ".DS_Store", "__MACOSX", "Thumbs.db"}


@dataclass(frozen=True)
class CollectedSubmission:
    """One student's submission: the file to grade, or None and the reason there is none."""

    student: str
    path: Path | None
    problem: str | None = None
    created_at: object = None  # Gradescope's ``:created_at`` for this submission, as the YAML gave it
    lms: LmsStudent | None = None  # who the student is in Canvas or Moodle, read from its download


class CollectError(ValueError):
    """The submissions cannot be read at all (no such folder, a broken zip)."""


def safe_id(name: str) -> str:
    """A student id usable as a folder name."""
    cleaned = re.sub(r"[^A-Za-z0-9._@+-]+", "_", name).strip("._") or "student"
    return cleaned[:100]


def extract_zip(path: Path, into: Path) -> Path:
    """Unpack a zip of submissions, refusing paths that leave the folder and archives too large."""
    try:
        with zipfile.ZipFile(path) as archive:
            if sum(info.file_size for info in archive.infolist()) > MAX_ZIP_BYTES:
                raise CollectError(f"{path.name} unpacks to more than {MAX_ZIP_BYTES // 2**30} GiB")
            for info in archive.infolist():
                target = (into / info.filename).resolve()
                if not target.is_relative_to(into.resolve()):
                    raise CollectError(f"{path.name} holds a path outside the archive: {info.filename}")
            archive.extractall(into)
            for info in archive.infolist():  # keep each file's time: it may be its submission time
                stamp = time.mktime(info.date_time + (0, 0, -1))
                try:
                    os.utime(into / info.filename, (stamp, stamp))
                except OSError:
                    continue
    except zipfile.BadZipFile as exc:
        raise CollectError(f"{path.name} is not a readable zip: {exc}") from None
    entries = _entries(into)  # the owner file claim() left is hidden, as the unpacked files' own dotfiles
    alone = entries[0] if len(entries) == 1 and entries[0].is_dir() else None
    if alone and lms_of(_entries(alone)):  # an LMS's download, unpacked and zipped again
        return alone
    return alone if alone and not _is_student_dir(alone) and read_moodle_entry(alone) is None else into


def _entries(folder: Path) -> list[Path]:
    """What ``folder`` holds that may be a submission: no metadata, OS litter (IGNORED) or hidden file."""
    return [p for p in sorted(folder.iterdir()) if p.name not in IGNORED and not p.name.startswith(".")]


def _is_student_dir(path: Path) -> bool:
    return any(p.suffix == ".ipynb" for p in path.iterdir()) if path.is_dir() else False


def _gradescope_metadata(root: Path) -> tuple[dict[str, str], dict[str, object]]:
    """From Gradescope's submission_metadata.yml, by folder: the student id (sid, email or name), ``:created_at``."""
    meta = root / "submission_metadata.yml"
    if not meta.is_file():
        return {}, {}
    try:
        data = yaml.safe_load(meta.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError:
        return {}, {}
    names, created = {}, {}
    for folder, info in data.items() if isinstance(data, dict) else ():
        info = {str(k).lstrip(":"): v for k, v in info.items()} if isinstance(info, dict) else {}
        submitters = info.get("submitters") or []
        if submitters and isinstance(submitters[0], dict):
            person = {k.lstrip(":"): v for k, v in submitters[0].items()}
            names[str(folder)] = str(person.get("sid") or person.get("email") or person.get("name") or folder)
        if info.get("created_at") is not None:
            created[str(folder)] = info["created_at"]
    return names, created


def _pick_notebook(folder: Path, lab: str) -> tuple[Path | None, str | None]:
    notebooks = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if not notebooks:
        return None, f"the folder {folder.name} holds no notebook"
    named = [p for p in notebooks if lab in p.name]
    return (named or notebooks)[0], None


def collect_submissions(source: Path, lab: str, workdir: Path | None = None) -> list[CollectedSubmission]:
    """Every submission under ``source``, one per student, in a stable order."""
    if not source.exists():
        raise CollectError(f"{source} does not exist")
    if source.is_file():
        if source.suffix != ".zip":
            raise CollectError(f"{source} is neither a folder nor a zip of submissions")
        if workdir is None:
            workdir = Path(tempfile.mkdtemp(prefix="autograder-class-"))
            claim(workdir)  # removed by a later grader should this batch be killed (stale_roots.py)
        source = extract_zip(source, workdir)
    names, created = _gradescope_metadata(source)
    submissions: dict[str, CollectedSubmission] = {}
    entries = _entries(source)
    from_lms = None if names else lms_submissions(entries)
    if from_lms is not None:
        found, entries = from_lms
        for key, (lms, files) in found.items():
            path, problem = pick_lab_notebook(files, lab)
            submissions[safe_id(key)] = CollectedSubmission(safe_id(key), path, problem, lms=lms)
    for entry in entries:
        student = safe_id(names.get(entry.name, entry.stem if entry.is_file() else entry.name))
        if entry.is_dir():
            path, problem = _pick_notebook(entry, lab)
        else:
            path, problem = entry, None
        if student in submissions:
            student = safe_id(f"{student}-{entry.name}")
        submissions[student] = CollectedSubmission(student, path, problem, created.get(entry.name))
    return list(submissions.values())
