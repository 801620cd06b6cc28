"""What a kernel at the uid level may read and write, for Landlock (landlock.py) to enforce.

Without namespaces, file permissions alone let the kernel read every world-readable file on the
machine: another copy of a course (a TA's clone, a scratch folder) with its solutions and graders. The
allow-list is what bubblewrap would bind, and no more:

- read and execute: Python's installations and the package folders a ``.pth`` file adds (as bubblewrap
  binds them), less this package when it is installed among them (its graders and references: the
  folders above it may be listed, so its files' names are seen, not their contents); the
  system (``/usr``, ``/lib*``, ``/bin``, ``/sbin``, ``/etc`` for ld.so, locales and certificates),
  ``/proc`` (JAX and IPython read ``/proc/self``), the CPU list under ``/sys``, the harness's read-only
  folders for the kernel (the copies of the modules it loads: housekeeping, kernel recorder, lab probe),
  and the character devices every process uses;
- read and write: the kernel's working directory (its home and ``TMPDIR``, holding the submission's
  copy), ``/dev/null``, the terminal devices IPython's shell commands open, and ``/dev/shm``, where
  glibc makes the semaphores of ``multiprocessing`` (bubblewrap gives the kernel a private one; here it
  is the machine's, its files guarded by their modes and its sticky bit).

Not the shared ``/tmp``, nor any home, checkout or scratch folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autograder.paths import PACKAGE_DIR
from autograder.run.sandbox.bubblewrap import _readonly_roots

SYSTEM = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys/devices/system/cpu"]
DEVICES_READ = ["/dev/zero", "/dev/random", "/dev/urandom"]
DEVICES_WRITE = ["/dev/null", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"]


def without(root: Path, hidden: Path) -> tuple[list[Path], list[Path]]:
    """``root`` as Landlock rules that leave out ``hidden``: (read, listed). A rule covers a whole folder
    and nothing narrower takes a right back, so, along the way down to ``hidden``, each folder may only
    be listed (Python's imports and ``.pth`` files need that) and every other entry of it is read. An
    entry that leads (through a link) to ``hidden`` or a folder above it is left out: the walk covers
    what may be seen there."""
    if not hidden.is_relative_to(root):
        return [root], []
    if hidden == root:
        return [], []
    step = root / hidden.relative_to(root).parts[0]  # the entry of ``root`` on the way to ``hidden``
    kept = [
        entry.resolve()
        for entry in sorted(root.iterdir())
        if entry != step and not hidden.is_relative_to(entry.resolve())
    ]
    read, listed = without(step, hidden)
    return kept + read, [root, *listed]


def kernel_allowlist(workdir: Path, readonly: Sequence[Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """(read, write, listed): what a kernel working in ``workdir`` may read, write, and only list."""
    package = PACKAGE_DIR.resolve()
    read: list[Path] = []
    listed: list[Path] = []
    for root in _readonly_roots():
        root_read, root_listed = without(root, package)
        read += root_read
        listed += root_listed
    read += [Path(p) for p in SYSTEM + DEVICES_READ] + list(readonly)
    return read, [workdir, *(Path(p) for p in DEVICES_WRITE)], listed
