"""The CPU share the grader's container allows, read from its cgroup: under a quota the kernel runs in
bursts of the scheduler's period, so the grader's samples span several periods (``min_sample_seconds``)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIODS_PER_SAMPLE = 3  # a sample spans at least this many scheduler periods under a quota


class CpuQuota(NamedTuple):
    """``cpus`` CPUs' worth of time in each scheduler period of ``period`` seconds."""

    cpus: float
    period: float


def _cgroup_folders(controller: str) -> tuple[list[Path], str] | None:
    """This process's cgroup folder for ``controller`` and those above it, with the cgroup version."""
    lines = _read_proc_cgroup()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            top = CGROUP_ROOT / ",".join(sorted(controllers.split(",")))
            top = top if top.is_dir() else CGROUP_ROOT / controller
            return _up_to(top / path.lstrip("/"), top), "v1"
    for line in lines:
        if line.startswith("0::"):
            return _up_to(CGROUP_ROOT / line[3:].lstrip("/"), CGROUP_ROOT), "v2"
    return None


def _read_proc_cgroup() -> list[str]:
    return (_read(Path("/proc/self/cgroup")) or "").splitlines()  # none where it cannot be read


def _up_to(folder: Path, top: Path) -> list[Path]:
    above = [parent for parent in folder.parents if parent == top or top in parent.parents]
    return [folder, *above] if folder.is_dir() else above


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def container_cpu_quota() -> CpuQuota | None:
    """The smallest CPU quota of this process's cgroup and those above it; None where none can be read."""
    found = _cgroup_folders("cpu")
    if found is None:
        return None
    folders, version = found
    quotas = []
    for folder in folders:
        if version == "v2":
            parts = (_read(folder / "cpu.max") or "").split()
        else:
            parts = [_read(folder / "cpu.cfs_quota_us") or "", _read(folder / "cpu.cfs_period_us") or ""]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit() and int(parts[1]) > 0:  # max, -1: none
            quotas.append(CpuQuota(int(parts[0]) / int(parts[1]), int(parts[1]) / 1e6))
    return min(quotas, key=lambda q: q.cpus) if quotas else None


def min_sample_seconds() -> float:
    """How long one timed sample must last: several scheduler periods under a CPU quota, else 0."""
    quota = container_cpu_quota()
    return 0.0 if quota is None else PERIODS_PER_SAMPLE * quota.period
