"""The folders above this Python made searchable by every user while a test needs it, shared by every
test session on the machine.

The uid level runs the kernel as another user, so the folders above the grader's Python (pyenv's under
``/root``, a venv in a private temporary folder) must be searchable by all while such a test runs
(Gradescope's Python lives in ``/usr``). Their modes belong to the machine, not to one session: a
session that put ``/root`` back to 0700 while another's kernels were starting would fail that one's
uid-level gradings. So the first to change a folder notes its mode in a state file, each user holds a
shared lock (``users``) for as long as it needs the folders, and the last one to let go puts every noted
mode back. Changes to the modes and the notes are made one user at a time (``changing``, held briefly). A
session that dies lets go of its lock with it; the modes it noted are put back by the next last user.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

STATE_NAME = "autograder-test-searchable"  # under the temporary folder: the locks and ``modes.json``


class Searchable:
    """A hold on the folders' searchable modes, until ``release``."""

    def __init__(self, folders: Iterable[Path], state: Path | None = None):
        self.state = state or _state_directory()
        with _changing(self.state):
            noted = _read_modes(self.state)
            for folder in sorted(set(folders)):
                mode = stat.S_IMODE(os.stat(folder).st_mode)
                if not mode & stat.S_IXOTH:
                    os.chmod(folder, mode | stat.S_IXOTH)
                    noted.setdefault(str(folder), mode)
            _write_modes(self.state, noted)
            self._users: int | None = _open_lock(self.state / "users")
            fcntl.flock(self._users, fcntl.LOCK_SH)

    def release(self) -> None:
        """Let go; the last user to let go puts the noted modes back."""
        if self._users is None:
            return
        users, self._users = self._users, None
        with _changing(self.state):
            try:
                # the last user only if no other holds its shared lock (a failed try loses this one's: it is leaving)
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            finally:
                os.close(users)
            for folder, mode in _read_modes(self.state).items():
                if os.path.isdir(folder):
                    os.chmod(folder, mode)
            _write_modes(self.state, {})


def python_searchable_by_all() -> Searchable:
    """Every user may search the folders above this Python and, when it runs from a venv, above the venv."""
    return Searchable(d for prefix in (sys.base_prefix, sys.prefix) for d in Path(prefix).resolve().parents)


def restore_modes(hold: Searchable | None) -> None:
    if hold is not None:
        hold.release()


@contextlib.contextmanager
def _changing(state: Path) -> Iterator[None]:
    """One user at a time changes the modes and their notes."""
    fd = _open_lock(state / "changing")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _open_lock(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def _state_directory() -> Path:
    directory = Path(tempfile.gettempdir()) / STATE_NAME
    directory.mkdir(mode=0o700, exist_ok=True)
    return directory


def _read_modes(state: Path) -> dict[str, int]:
    try:
        return json.loads((state / "modes.json").read_text())
    except (OSError, ValueError):
        return {}


def _write_modes(state: Path, modes: dict[str, int]) -> None:
    partial = state / "modes.json.partial"
    partial.write_text(json.dumps(modes))
    partial.replace(state / "modes.json")
