"""A command run in a container's limits: a new cgroup (v1 or v2) of a given memory and CPU share,
as Gradescope's container has (768 MB and half a CPU by default). Needs root and a writable cgroup
file system; ``box_problem`` says why not otherwise. Used to measure grading under those limits."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from autograder.run import CGROUP_ROOT

PERIOD_US = 100_000


@dataclass(frozen=True)
class BoxRun:
    returncode: int
    output: str
    peak_bytes: int | None  # the most memory the whole process tree used at once
    oom_kills: int
    seconds: float
    cpu_periods: str = ""  # how often its CPU quota held it back (cpu.stat), for a failure to show


def _own_cgroup(controller: str | None) -> str:
    """This process's cgroup path for ``controller`` (v1), or its v2 path when ``controller`` is None."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller is None and line.startswith("0::") or controller in controllers.split(","):
            return path.lstrip("/")
    return ""


def _version() -> str | None:
    if (CGROUP_ROOT / "memory" / "memory.limit_in_bytes").exists() or (CGROUP_ROOT / "memory").is_dir():
        return "v1"
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return "v2"
    return None


def box_problem() -> str | None:
    """Why a cgroup cannot be made here (None: it can)."""
    if os.geteuid() != 0:
        return "making a cgroup needs root"
    version = _version()
    if version is None:
        return f"no cgroup file system at {CGROUP_ROOT}"
    parent = (CGROUP_ROOT / "memory" / _own_cgroup("memory")) if version == "v1" else CGROUP_ROOT / _own_cgroup(None)
    if not os.access(parent, os.W_OK):
        return f"{parent} is not writable (a container's read-only cgroup file system)"
    if version == "v2" and "memory" not in (parent / "cgroup.subtree_control").read_text().split():
        return f"the memory controller is not enabled for the children of {parent}"
    return None


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _make(memory_bytes: int, cpus: float) -> tuple[list[Path], Path, str]:
    """The cgroup folders made (to join and remove), the memory one, and the version."""
    name = f"autograder-box-{uuid.uuid4().hex[:8]}"
    quota = str(int(cpus * PERIOD_US))
    if _version() == "v1":
        memory = CGROUP_ROOT / "memory" / _own_cgroup("memory") / name
        cpu = CGROUP_ROOT / "cpu" / _own_cgroup("cpu") / name
        memory.mkdir()
        cpu.mkdir()
        _write(memory / "memory.limit_in_bytes", str(memory_bytes))
        if (memory / "memory.memsw.limit_in_bytes").exists():
            _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        _write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
        _write(cpu / "cpu.cfs_quota_us", quota)
        return [memory, cpu], memory, "v1"
    folder = CGROUP_ROOT / _own_cgroup(None) / name
    folder.mkdir()
    _write(folder / "memory.max", str(memory_bytes))
    if (folder / "memory.swap.max").exists():
        _write(folder / "memory.swap.max", "0")
    if (folder / "cpu.max").exists():
        _write(folder / "cpu.max", f"{quota} {PERIOD_US}")
    return [folder], folder, "v2"


def _peak(memory: Path, version: str) -> int | None:
    path = memory / ("memory.max_usage_in_bytes" if version == "v1" else "memory.peak")
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _oom_kills(memory: Path, version: str) -> int:
    text = (memory / ("memory.oom_control" if version == "v1" else "memory.events")).read_text()
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    return 0


def _cpu_periods(cpu: Path) -> str:
    """ "throttled in N of M periods, S s in all": a box that got its quota whenever it wanted it is throttled in
    most periods it ran through; one that waited for the machine's processors, in few."""
    try:
        stat = dict(line.split() for line in (cpu / "cpu.stat").read_text().splitlines() if line.count(" ") == 1)
    except (OSError, ValueError):
        return "its cpu.stat cannot be read"
    throttled = int(stat.get("throttled_time", 0)) / 1e9 or int(stat.get("throttled_usec", 0)) / 1e6
    periods = f"{stat.get('nr_throttled', '?')} of {stat.get('nr_periods', '?')} periods"
    return f"throttled in {periods}, {throttled:.1f} s in all"


def run_in_box(
    command: list[str],
    memory_bytes: int,
    cpus: float,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 1800,
) -> BoxRun:
    """Run ``command`` in a new cgroup of ``memory_bytes`` (no swap) and ``cpus`` CPUs; its peak memory,
    its out-of-memory kills, and its output. The cgroup is removed after."""
    problem = box_problem()
    if problem:
        raise RuntimeError(f"cannot make a cgroup: {problem}")
    folders, memory, version = _make(memory_bytes, cpus)

    def join() -> None:
        for folder in folders:
            _write(folder / "cgroup.procs", str(os.getpid()))

    started = time.monotonic()
    try:
        done = subprocess.run(
            command, env=env, cwd=cwd, preexec_fn=join, capture_output=True, text=True, timeout=timeout
        )
        seconds = time.monotonic() - started
        output, peak, kills = done.stdout + done.stderr, _peak(memory, version), _oom_kills(memory, version)
        cpu = folders[-1]  # v1: [memory, cpu]; v2: the one folder
        return BoxRun(done.returncode, output, peak, kills, seconds, _cpu_periods(cpu))
    finally:
        for folder in folders:
            _empty_and_remove(folder)


def _empty_and_remove(folder: Path) -> None:
    """Kill what is left in ``folder`` (a process the command left behind) and remove it."""
    for _ in range(50):
        try:
            pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        except OSError:
            return
        for pid in pids:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        try:
            folder.rmdir()
            return
        except OSError:
            time.sleep(0.1)
