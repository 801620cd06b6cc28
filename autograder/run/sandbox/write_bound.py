"""A bound on what a kernel writes in all: its root directory is a tmpfs of ``ResourceLimits.write_bytes``,
where the grader may mount, and at most a quarter of a known container memory (a tmpfs is memory); else
``bound_root`` says why and a watch bounds it (write_watch.py). docs/trust-boundary.md says what it holds."""

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


def unbind_root(root: Path) -> None:
    """Unmount ``bound_root``'s tmpfs, if any, lazily: a process still in it lets go later."""
    if os.path.ismount(root):
        _libc.umount2(os.fsencode(root), MNT_DETACH)


def explain_write_error(error: str | None, write_bytes: int | None) -> str | None:
    if error is None or write_bytes is None or ENOSPC_SIGN not in error:
        return error
    return (
        f"{error} (the kernel may write {write_bytes / MIB:g} MiB in all: its working directory, TMPDIR and "
        "/dev/shm together; set by --write-mib, write_bytes in autograder/run/sandbox/limits.py)"
    )
