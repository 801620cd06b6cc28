"""A lock on cores: one ``flock``-ed file per core, so that a timed turn holds up only what shares its cores.
A lock that cannot take them all lets go of those it took, so two takers never hold one another up."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from autograder.fairness.core_pinning import home_cores


class CoreLock(contextlib.AbstractContextManager["CoreLock"]):
    """The files ``<name>-<core>`` under ``directory`` for each of ``cores`` (by default ``home_cores``)."""

    def __init__(self, directory: Path, name: str, cores: tuple[int, ...] | None = None):
        self.fds: list[int] = []
        self.directory, self.cores = directory, home_cores() if cores is None else cores
        try:
            for core in self.cores:
                path = directory / f"{name}-{core}"
                self.fds.append(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        except BaseException:
            self.close()
            raise

    def take(self, operation: int) -> bool:
        """Lock every file with ``operation`` without waiting: True if all were taken, else False, holding none."""
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

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the files (idempotent): closing a descriptor drops its lock."""
        fds, self.fds = self.fds, []
        for fd in fds:
            os.close(fd)
