"""What the processors have spent their time on so far, as ``/proc/stat`` counts it: busy and total, in
jiffies, summed over the processors asked for. Both the wait for a quiet machine (machine_quiet.py) and the
load others put on a timing (others_load.py) are differences of two such readings."""

from __future__ import annotations

import os
from pathlib import Path

PROC_STAT = Path("/proc/stat")
JIFFIES_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def processor_jiffies(cores: tuple[int, ...]) -> tuple[int, int] | None:
    """(busy, total) jiffies of the processors ``cores`` so far, or None where ``/proc/stat`` cannot be
    read or lacks one of them."""
    wanted = {f"cpu{core}" for core in cores}
    busy = total = 0
    try:
        lines = [line.split() for line in PROC_STAT.read_text().splitlines() if line.startswith("cpu")]
        for fields in lines:
            if fields[0] not in wanted:
                continue
            wanted.discard(fields[0])
            values = [int(v) for v in fields[1:]]
            if len(values) < 4:
                return None
            cpu_total = sum(values[:8])  # guest time is counted in user time already
            busy += cpu_total - values[3] - (values[4] if len(values) > 4 else 0)  # idle and iowait
            total += cpu_total
    except (OSError, IndexError, ValueError):
        return None
    return None if wanted else (busy, total)
