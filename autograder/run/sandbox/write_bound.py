"""A bound on what a kernel writes: its root directory is a tmpfs of ``ResourceLimits.write_bytes``.

A file of 256 MiB at most (``RLIMIT_FSIZE``) bounds no total: a cell that writes such files one after
another fills the machine's disk, and then every later results.json, log and gradebook fails to be written.
So, where the grader may mount (root, with the right to mount: where bubblewrap runs as root), the kernel's
root directory is a tmpfs of its own, sized: the working directory (its ``TMPDIR`` at the uid level), the
modules it loads, its log and, under bubblewrap, its ``/tmp`` and ``/dev/shm`` (bound from ``scratch/``)
all live there, so they are bounded together. A write past the bound fails with ``ENOSPC`` in the cell that
made it (``No space left on device``, which ``explain_write_error`` names); a ``fallocate`` cannot pass it
either. A tmpfs is memory: what the kernel writes counts in the memory of the machine or the container,
beside what ``RLIMIT_DATA`` lets it use, and killing the kernel frees none of it; so in a container whose
memory limit is known, a tmpfs may take a quarter of it at most (a larger bound is watched on the disk).
The mount goes when the kernel closes (or when a later grader sweeps the root of a killed one:
stale_roots.py), and with it everything written.

Where the grader may not mount (an unprivileged grader; a container without ``CAP_SYS_ADMIN``, such as
Gradescope's, where the uid level runs), ``bound_root`` says why, the root is an ordinary directory, and a
watch bounds it instead (write_watch.py), as it does the uid level's ``/dev/shm``, which is the machine's.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from autograder.run.sandbox.container_memory import memory_limit_bytes

MIB = 2**20
INODES_PER_MIB = 64  # files and folders the tmpfs holds: 16384 for 256 MiB, each some 1 KiB of memory
MNT_DETACH = 2
MEMORY_SHARE = 0.25  # of a container's memory, the most a tmpfs may hold: beyond, the disk and a watch
SCRATCH = "scratch"  # in the root: bubblewrap's /tmp and /dev/shm, on the bounded tmpfs
ENOSPC_SIGN = "[Errno 28]"

_libc = ctypes.CDLL(None, use_errno=True)


def bound_root(root: Path, write_bytes: int) -> str | None:
    """Mount a tmpfs of ``write_bytes`` on ``root`` (empty, made by this grader): None once mounted,
    else why it could not be."""
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


def unbind_root(root: Path) -> None:
    """Unmount the tmpfs ``bound_root`` mounted on ``root`` (lazily: a process still in it lets go later);
    nothing when none is."""
    if os.path.ismount(root):
        _libc.umount2(os.fsencode(root), MNT_DETACH)


def explain_write_error(error: str | None, write_bytes: int | None) -> str | None:
    """A cell's error, with the bound named when a write hit it (``ENOSPC``)."""
    if error is None or write_bytes is None or ENOSPC_SIGN not in error:
        return error
    return (
        f"{error} (the kernel may write {write_bytes / MIB:g} MiB in all: its working directory, TMPDIR and "
        "/dev/shm together; set by --write-mib, write_bytes in autograder/run/sandbox/limits.py)"
    )
