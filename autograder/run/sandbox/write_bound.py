"""A bound on what a kernel writes in all: a tmpfs root where the grader may mount one, else a watch (a watch,
not a wall: what is written between two looks passes). docs/trust-boundary.md says what each holds."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from autograder.run.sandbox.limits import MIB, memory_limit_bytes

INODES_PER_MIB = 64  # files and folders the tmpfs holds: 16384 for 256 MiB, each some 1 KiB of memory
MNT_DETACH = 2
MEMORY_SHARE = 0.25  # of a container's memory, the most a tmpfs may hold: beyond, the disk and a watch
SCRATCH = "scratch"  # in the root: bubblewrap's /tmp and /dev/shm, on the bounded tmpfs
ENOSPC_SIGN = "[Errno 28]"
POLL_SECONDS = 0.1
SHARED_MEMORY = Path("/dev/shm")  # the uid level's, the machine's: multiprocessing's semaphores
BOUND_WORDS = (  # what the bound holds, and where it is set
    "its working directory, TMPDIR and /dev/shm together; set by --write-mib, write_bytes in "
    "autograder/run/sandbox/limits.py"
)

_libc = ctypes.CDLL(None, use_errno=True)


def bound_root(root: Path, write_bytes: int) -> str | None:
    """Mount a tmpfs of ``write_bytes`` on the empty ``root``: None once mounted, else why not."""
    if os.geteuid() != 0:
        return "the grader is not root, so it cannot mount a tmpfs for the kernel"
    limit = memory_limit_bytes()
    if limit is not None and write_bytes > limit * MEMORY_SHARE:
        return (
            f"a tmpfs of {write_bytes / MIB:g} MiB would take more than a quarter of the container's "
            f"{limit / MIB:.0f} MiB of memory"
        )
    inodes = max(1024, write_bytes // MIB * INODES_PER_MIB)
    options = f"size={write_bytes},nr_inodes={inodes},mode=0755".encode()
    if _libc.mount(b"tmpfs", os.fsencode(root), b"tmpfs", 0, options) != 0:
        error = ctypes.get_errno()
        return f"mounting a tmpfs failed: {os.strerror(error)} (no right to mount here)"
    return None


def remove_root(root: Path) -> None:
    """Remove ``root`` and unmount ``bound_root``'s tmpfs, if any, lazily: a process still in it lets go later."""
    if os.path.ismount(root):
        _libc.umount2(os.fsencode(root), MNT_DETACH)
    shutil.rmtree(root, ignore_errors=True)


def explain_write_error(error: str | None, write_bytes: int | None) -> str | None:
    if error is None or write_bytes is None or ENOSPC_SIGN not in error:
        return error
    return f"{error} (the kernel may write {write_bytes / MIB:g} MiB in all: {BOUND_WORDS})"


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
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
