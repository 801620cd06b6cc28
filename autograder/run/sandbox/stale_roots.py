"""Folders a killed grader left behind: a kernel's root (a copy of the submission, its log, what the
student's code wrote), a run's facts, a batch worker's copy of a submission and a class unpacked from a
zip. A grader that ends removes its own; one killed (SIGKILL, out of memory, a batch's worker lost)
cannot, and a later kernel leased the same uid could read a root's working directory where Landlock does
not limit its files.

So each such folder names the process that made it (``claim``: its pid namespace, pid and start time,
which a reused pid does not match), and a grader's first kernel removes every folder whose maker has
gone (``sweep_once``). Folders of another pid namespace (a container sharing ``/tmp``), of another user
(a kernel's uid may write in ``/tmp``), links, and folders without an owner (kept with
``AUTOGRADER_KEEP_RUNS``, or made before this) are left alone.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import tempfile
from pathlib import Path

from autograder.run.sandbox.write_bound import unbind_root

OWNER_FILE = ".autograder-owner"
PREFIX = "autograder-"
ENDED_STATES = ("Z", "X")  # /proc/PID/stat's states of a process that has ended: zombie, dead


def _identity(pid: int) -> str | None:
    """``pid``'s pid namespace, pid and start time, or None when it has ended (or cannot be read).

    A zombie has ended: a grader killed with its parent is an orphan, which waits as a zombie until the
    machine's first process reaps it (a second or more on a busy machine; never, under a first process
    that reaps nothing), and the next grader's sweep must not take it for a live one."""
    try:
        namespace = os.readlink(f"/proc/{pid}/ns/pid")
        # the fields after the command's closing parenthesis start at the 3rd (the state); the start time
        # is the 22nd
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        state, start = fields[0], fields[19]
    except (OSError, IndexError):
        return None
    return None if state in ENDED_STATES else f"{namespace} {pid} {start}"


def claim(folder: Path) -> None:
    """Name this process as ``folder``'s maker, to be removed by a later grader should this one be killed."""
    identity = _identity(os.getpid())
    if identity is not None:
        owner = folder / OWNER_FILE
        owner.write_text(identity)
        owner.chmod(0o600)


def disown(folder: Path) -> None:
    """Keep ``folder`` for good (``AUTOGRADER_KEEP_RUNS``): no later grader removes it."""
    (folder / OWNER_FILE).unlink(missing_ok=True)


def sweep(directory: Path) -> list[Path]:
    """Remove the harness's folders in ``directory`` whose maker, of this pid namespace, has ended."""
    ours = _identity(os.getpid())
    if ours is None:  # no /proc: nothing can be told apart
        return []
    namespace = ours.split()[0]
    removed = []
    for folder in directory.glob(f"{PREFIX}*"):
        try:
            if not _made_by_this_user(folder):  # a kernel's uid may make folders in /tmp too
                continue
            owner = (folder / OWNER_FILE).read_text().split()
        except OSError:
            continue
        if len(owner) != 3 or owner[0] != namespace or not owner[1].isdigit():
            continue
        if _identity(int(owner[1])) != " ".join(owner):
            unbind_root(folder)  # a kernel's root is a tmpfs where it could be (write_bound.py)
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _made_by_this_user(folder: Path) -> bool:
    """A real folder (not a link) of this process's user, as the grader makes them."""
    info = folder.lstat()
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()


@functools.cache
def sweep_once() -> list[Path]:
    """``sweep`` the temporary directory, once per process."""
    return sweep(Path(tempfile.gettempdir()))
