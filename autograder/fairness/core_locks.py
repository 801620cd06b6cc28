"""A lock on the cores a process runs on: one ``flock``-ed file per core of its CPU affinity.

The machine's timed turn (timed_turns.py) keeps other kernels off the cores a timed task runs on. A grading
that may run on every core (``autograder grade``, Gradescope, a batch with more workers than cores) locks
every core's file, so it waits for, and holds up, every other grading, as one machine-wide lock would. A
batch's worker pinned to a core of its own (core_pinning.py) locks that core's file alone: its timed
task holds up only what runs on its core, and the other workers go on on theirs.

Files are taken in the order of their cores, without blocking; a lock that cannot take them all lets go
of those it took, so two takers never hold one another up.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from autograder.fairness.core_pinning import process_cores


class CoreLock:
    """The files ``<name>-<core>`` under ``directory`` for each core the calling thread may run on, opened;
    ``take`` locks all of them or none. ``close`` drops whatever it holds."""

    def __init__(self, directory: Path, name: str, cores: tuple[int, ...] | None = None):
        self.fds: list[int] = []
        self.directory, self.cores = directory, process_cores() if cores is None else cores
        try:
            for core in self.cores:
                path = directory / f"{name}-{core}"
                self.fds.append(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        except BaseException:
            self.close()
            raise

    def take(self, operation: int) -> bool:
        """Lock every file with ``operation`` (``fcntl.LOCK_SH`` or ``LOCK_EX``) without waiting: True if
        all were taken; else False, holding none of them."""
        taken: list[int] = []
        for fd in self.fds:
            try:
                fcntl.flock(fd, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                for held in taken:
                    fcntl.flock(held, fcntl.LOCK_UN)
                return False
            taken.append(fd)
        return True

    def unlock(self) -> None:
        for fd in self.fds:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the files (idempotent): closing a descriptor drops its lock."""
        fds, self.fds = self.fds, []
        for fd in fds:
            os.close(fd)
