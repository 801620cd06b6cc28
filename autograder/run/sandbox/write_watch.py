"""Where no tmpfs bounds what a kernel writes (write_bound.py), a thread adds up what it wrote every tenth
of a second, under its root and of its uid in the shared folders, and stops the run past the bound. A
watch, not a wall: what is written between two looks passes."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

POLL_SECONDS = 0.1
SHARED_MEMORY = Path("/dev/shm")  # the uid level's, the machine's: multiprocessing's semaphores


class WriteWatch:
    """Past ``bound`` bytes under ``root`` and of ``uid``'s in ``shared``, calls ``stop`` once; ``passed``."""

    def __init__(
        self, root: Path, shared: Sequence[Path], uid: int | None, bound: int, stop: Callable[[], object]
    ) -> None:
        self.root, self.shared, self.uid, self.bound, self._stop = root, list(shared), uid, bound, stop
        self.passed = False
        self.stopped_at = 0  # the bytes the kernel's files took when it was stopped
        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="autograder-write-watch", daemon=True)
        self._thread.start()

    def usage(self) -> int:
        seen: set[tuple[int, int]] = set()
        owned = [_blocks(folder, self.uid, seen) for folder in self.shared] if self.uid is not None else []
        return _blocks(self.root, None, seen) + sum(owned)

    def close(self) -> None:
        self._ended.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    def _watch(self) -> None:
        while not self._ended.wait(POLL_SECONDS):
            usage = self.usage()
            if usage > self.bound:
                self.passed, self.stopped_at = True, usage
                self._stop()
                return


def _blocks(folder: Path, owner: int | None, seen: set[tuple[int, int]]) -> int:
    """Bytes the files under ``folder`` (of ``owner``, if given) take on disk, each inode once."""
    total, pending = 0, [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                found = list(entries)
        except OSError:  # gone meanwhile
            continue
        for entry in found:
            try:
                path, info = entry.path, entry.stat(follow_symlinks=False)
            except OSError:  # gone meanwhile: each entry alone, so that a vanishing file hides no other
                continue
            if (owner is not None and info.st_uid != owner) or (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * 512
            if stat.S_ISDIR(info.st_mode):
                pending.append(Path(path))
    return total


def remove_owned(folder: Path, uid: int) -> None:
    """Remove what ``uid`` left in ``folder``, before the uid serves another kernel."""
    try:
        with os.scandir(folder) as entries:
            found = list(entries)
    except OSError:
        return
    for entry in found:
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
