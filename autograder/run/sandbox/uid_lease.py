"""A uid of its own for each kernel (as root), leased from a pool by a lock file per uid.

Apart from the sandbox's commands (run/sandbox/bubblewrap.py): bubblewrap run as root and the uid level alike drop the
kernel to the uid leased here, so that one kernel's process limit, files and signals never reach another's.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from pathlib import Path

from autograder.run.sandbox.system_tools import system_command

FIRST_SANDBOX_UID = 60000
SANDBOX_UIDS = 5000


class SandboxUnavailable(RuntimeError):
    """No sandbox level can confine a kernel on this machine: ``reason`` says why, each level's reason
    named; the message adds ``advice``, what the reader may do instead."""

    def __init__(self, reason: str, advice: str = ""):
        super().__init__(f"{reason}. {advice}" if advice else reason)
        self.reason = reason


class UidLease:
    """A uid of its own for one kernel, held until ``release``: no other kernel, in this process or in
    another, gets it meanwhile (a lock file per uid), so one kernel's process limit, files and signals
    never reach another's."""

    def __init__(self):
        directory = _lease_directory()
        for offset in range(SANDBOX_UIDS):
            uid = FIRST_SANDBOX_UID + (os.getpid() + offset) % SANDBOX_UIDS
            fd = os.open(directory / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise SandboxUnavailable(f"all {SANDBOX_UIDS} sandbox uids are held by running kernels")

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _lease_directory() -> Path:
    directory = Path(tempfile.gettempdir()) / "autograder-uids"
    directory.mkdir(mode=0o700, exist_ok=True)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise SandboxUnavailable(f"{directory} must be a private directory of uid {os.geteuid()}")
    return directory


def lease_uid() -> UidLease | None:
    """A uid of its own for a kernel when the grader is root; None otherwise (bwrap maps the user)."""
    return UidLease() if os.geteuid() == 0 else None


def setpriv_args(uid: int) -> list[str]:
    """Become ``uid`` with no groups, no capabilities, and no way to gain any (no_new_privs)."""
    return [
        system_command("setpriv"),
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
    ]


def make_private(directory: Path, uid: int) -> None:
    """Give ``directory`` to ``uid`` alone (0700): a kernel's working directory and home."""
    os.chown(directory, uid, uid)
    os.chmod(directory, 0o700)
