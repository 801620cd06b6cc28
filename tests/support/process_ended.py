"""Whether a process has ended, as a test waiting on one sees it: gone, or a zombie its parent has not
reaped yet (an orphan's parent may be slow to)."""

from __future__ import annotations

import psutil


def ended(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
