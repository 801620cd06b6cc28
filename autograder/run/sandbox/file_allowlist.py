"""What a kernel at the uid level may read, write and only list, for Landlock (landlock.py) to enforce: what
bubblewrap would bind and no more (Python less this package, the system, the kernel's modules and working
directory, the devices every process uses, the machine's ``/dev/shm`` for multiprocessing's semaphores);
never the shared ``/tmp``, a home or a checkout."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autograder.paths import PACKAGE_DIR
from autograder.run.sandbox.bubblewrap import _readonly_roots

SYSTEM = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys/devices/system/cpu"]
DEVICES_READ = ["/dev/zero", "/dev/random", "/dev/urandom"]
DEVICES_WRITE = ["/dev/null", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"]


def without(root: Path, hidden: Path) -> tuple[list[Path], list[Path]]:
    """``root`` as Landlock rules that leave out ``hidden``: (read, listed). A rule covers a whole folder, so
    each folder down to ``hidden`` is only listed and its other entries read (one leading, by a link, to
    ``hidden`` or above it left out)."""
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
    package = PACKAGE_DIR.resolve()
    read: list[Path] = []
    listed: list[Path] = []
    for root in _readonly_roots():
        root_read, root_listed = without(root, package)
        read += root_read
        listed += root_listed
    read += [Path(p) for p in SYSTEM + DEVICES_READ] + list(readonly)
    return read, [workdir, *(Path(p) for p in DEVICES_WRITE)], listed
