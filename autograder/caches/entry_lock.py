"""One process at a time computes a missing reference entry; the others wait for it and read it, instead of
computing the same reference beside it on a machine whose cores are all busy (a batch's warming worker
and its grading one, ``autograder test``'s two processes). The lock is ``flock`` on ``.<entry>.lock``
beside the entry, removed once the entry is stored; a cache that cannot be written has no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from autograder.caches.machine_cache import make_private_dirs


@contextlib.contextmanager
def computing_alone(entry: Path) -> Iterator[None]:
    """Held while this process computes and stores ``entry``; it waits while another process does."""
    lock = entry.with_name(f".{entry.name}.lock")
    try:
        make_private_dirs(entry.parent)
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # a cache it cannot write: no other process can store the entry either
        yield
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
    finally:
        os.close(descriptor)
