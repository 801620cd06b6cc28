"""One process at a time computes a missing reference entry; the others wait for it and read it.

A batch's first worker warms the lab's references while the other worker grades its first submission, and
``autograder test`` does the same with its two processes: without a lock, a grading's checks compute each
reference the warming has not stored yet beside it, and two workers starting together compute the same
ones twice: the same work twice, on a machine whose cores are all busy.

The lock is ``flock`` on a file beside the entry, ``.<entry>.lock``, removed by its holder once the entry
is stored. A process that opened the file before it was removed still gets the lock, then finds the entry;
one that comes later finds the entry before it needs any lock. Where the cache cannot be written (an
image's cache mounted read-only) there is no lock and each process computes what it misses, as before.
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
