"""Where no tmpfs bounds what a kernel writes, a thread watches what it wrote and stops it past the bound.

A tmpfs (write_bound.py) needs a grader that may mount. Gradescope's container (Docker without
``CAP_SYS_ADMIN``, where the uid level runs) and a grader that is not root may not, and the uid level's
``/dev/shm`` is the machine's even where its root is a tmpfs. So there a thread adds up, every tenth of a
second, the blocks of the files under the kernel's root and of the files the kernel's uid owns in the
shared folders (``/dev/shm``), each inode once; past ``write_bytes`` it stops every process of the run, the
kernel with them (leftovers.py), and the run ends at that cell naming the bound; the tasks before it keep
their points. It is a watch, not a wall: what a kernel writes between two looks (at a page cache's speed,
some hundreds of MiB in a tenth of a second) is written before it is stopped, and a tree of very many
files makes each look slower. ``remove_owned`` removes what a uid left in a shared folder, when its
kernel has ended.
"""

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
    """Watches what a kernel wrote under ``root`` and, of ``uid``'s, in ``shared``; past ``bound`` bytes it
    calls ``stop`` (once) and says so in ``passed``."""

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
        """Bytes the kernel's files take now."""
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
    """Bytes the files under ``folder`` take on disk (only those ``owner`` owns, when given; each inode
    once, so that hard links count once)."""
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
    """Remove what ``uid`` left directly in ``folder`` (its files, links and folders), once its kernel has
    ended and before the uid serves another."""
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
