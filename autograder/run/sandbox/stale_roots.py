"""Folders a killed grader left behind: each names its maker (pid namespace, pid and start time, which a
reused pid does not match), and a grader's first kernel removes those whose maker has gone."""

from __future__ import annotations

import functools
import os
import stat
import tempfile
from pathlib import Path

from autograder.run.sandbox.write_bound import remove_root

OWNER_FILE = ".autograder-owner"
PREFIX = "autograder-"
ENDED_STATES = ("Z", "X")  # /proc/PID/stat's states of a process that has ended: zombie, dead


def _identity(pid: int) -> str | None:
    """``pid``'s pid namespace, pid and start time, or None when it has ended: a zombie has (a killed
    grader may wait as one long, under a first process that reaps nothing)."""
    try:
        namespace = os.readlink(f"/proc/{pid}/ns/pid")
        # after the command's closing parenthesis: the 3rd field (state) on, the start time the 22nd
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        state, start = fields[0], fields[19]
    except (OSError, IndexError):
        return None
    return None if state in ENDED_STATES else f"{namespace} {pid} {start}"


def claim(folder: Path) -> None:
    identity = _identity(os.getpid())
    if identity is not None:
        owner = folder / OWNER_FILE
        owner.write_text(identity)
        owner.chmod(0o600)


def disown(folder: Path) -> None:
    (folder / OWNER_FILE).unlink(missing_ok=True)


def sweep(directory: Path) -> list[Path]:
    ours = _identity(os.getpid())
    if ours is None:  # no /proc: nothing can be told apart
        return []
    namespace = ours.split()[0]
    removed = []
    for folder in directory.glob(f"{PREFIX}*"):
        try:
            info = folder.lstat()
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():  # a kernel's uid makes some too
                continue
            owner = (folder / OWNER_FILE).read_text().split()
        except OSError:
            continue
        if len(owner) != 3 or owner[0] != namespace or not owner[1].isdigit():
            continue
        if _identity(int(owner[1])) != " ".join(owner):
            remove_root(folder)  # a kernel's root is a tmpfs where it could be (write_bound.py)
            removed.append(folder)
    return removed


@functools.cache
def sweep_once() -> list[Path]:
    return sweep(Path(tempfile.gettempdir()))
