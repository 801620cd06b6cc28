"""The memory the grader's container allows and its out-of-memory kills, so that a kernel killed for memory
is named as such; both None where no cgroup can be read."""

from __future__ import annotations

from pathlib import Path

from autograder.run.sandbox.uid_lease import system_tool

CGROUP_ROOT = Path("/sys/fs/cgroup")
UNLIMITED = 2**60  # v1 says "no limit" with a number near 2**63


def _cgroup_directory() -> tuple[Path, str] | None:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            folder = CGROUP_ROOT / "memory" / path.lstrip("/")
            return (folder if folder.is_dir() else CGROUP_ROOT / "memory"), "v1"
    for line in lines:
        if line.startswith("0::"):
            folder = CGROUP_ROOT / line[3:].lstrip("/")
            return (folder if folder.is_dir() else CGROUP_ROOT), "v2"
    return None


def _read_number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and int(text) < UNLIMITED else None


def memory_limit_bytes() -> int | None:
    found = _cgroup_directory()
    if found is None:
        return None
    folder, version = found
    top = CGROUP_ROOT / "memory" if version == "v1" else CGROUP_ROOT
    name = "memory.limit_in_bytes" if version == "v1" else "memory.max"
    chain = [folder, *(parent for parent in folder.parents if parent.is_relative_to(top))]  # up to ``top``
    limits = [limit for limit in map(_read_number, (f / name for f in chain)) if limit is not None]
    return min(limits, default=None)


def oom_kills() -> int | None:
    found = _cgroup_directory()
    if found is None:
        return None
    folder, version = found
    try:
        text = (folder / ("memory.oom_control" if version == "v1" else "memory.events")).read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return None


def oom_first(argv: list[str]) -> list[str]:
    """``argv`` as the out-of-memory killer's first choice."""
    choom = system_tool("choom")
    return [choom, "-n", "1000", "--", *argv] if choom else argv


OUT_OF_MEMORY = "the notebook ran out of memory"


def megabytes(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def out_of_memory_words(cell: str | None, limit: int | None) -> str:
    where = f" at {cell}" if cell else ""
    allowed = f" (this container allows {megabytes(limit)})" if limit else ""
    return f"{OUT_OF_MEMORY}{where}{allowed}"
