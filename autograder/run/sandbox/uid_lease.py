"""A uid of its own for each kernel (as root), leased by a lock file per uid, so that one kernel's process
limit, files and signals never reach another's; and the system commands that start it as root, never PATH's
(a command of that name earlier in PATH would run as root in their place)."""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import stat
import tempfile
from pathlib import Path

SYSTEM_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

PACKAGES = {"prlimit": "util-linux", "setpriv": "util-linux", "choom": "util-linux", "env": "coreutils"}


@functools.cache
def system_tool(name: str) -> str | None:
    return shutil.which(name, path=os.pathsep.join(SYSTEM_FOLDERS))


def system_tool_problem(name: str) -> str | None:
    if system_tool(name) is not None:
        return None
    where = shutil.which(name)
    elsewhere = f" (PATH's `{where}` is not the system's, and is not used)" if where else ""
    return (
        f"`{name}` is not installed in the system's folders ({', '.join(SYSTEM_FOLDERS)}){elsewhere}: "
        f"install the Debian package {PACKAGES.get(name, name)}"
    )


def system_command(name: str) -> str:
    path = system_tool(name)
    if path is None:
        raise FileNotFoundError(system_tool_problem(name))
    return path


FIRST_SANDBOX_UID = 60000
SANDBOX_UIDS = 5000


class SandboxUnavailable(RuntimeError):
    """No sandbox level can confine a kernel here: ``reason`` says why; the message adds ``advice``."""

    def __init__(self, reason: str, advice: str = ""):
        super().__init__(f"{reason}. {advice}" if advice else reason)
        self.reason = reason


class UidLease:
    """A uid no other kernel, of any process, gets until ``release``."""

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
    """None when the grader is not root: bwrap maps the user."""
    return UidLease() if os.geteuid() == 0 else None


def setpriv_args(uid: int) -> list[str]:
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
    os.chown(directory, uid, uid)
    os.chmod(directory, 0o700)
