"""What a submission's run may take, declared once with its defaults (a field with ``command_line`` is also an
option: cli/options.py), the sandbox's levels with the sentence a result shows for each, and the memory the
grader's container allows with its out-of-memory kills, so that a kernel killed for memory is named as such
(None where no cgroup can be read). Imports nothing heavy: the command line reads them before any kernel."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.run.sandbox.uid_lease import system_tool

BUBBLEWRAP, UID_SECCOMP, UID, NO_SANDBOX = "bubblewrap", "uid+seccomp", "uid", "none"
UID_SECCOMP_LANDLOCK, UID_LANDLOCK = "uid+seccomp+landlock", "uid+landlock"
LANDLOCK_LEVELS = (UID_SECCOMP_LANDLOCK, UID_LANDLOCK)
LEVEL_DESCRIPTIONS = {
    BUBBLEWRAP: "bubblewrap (own filesystem view, no network, own process tree, unprivileged uid)",
    UID_SECCOMP_LANDLOCK: "uid, network closed by seccomp, files limited by Landlock (an unprivileged uid of its "
    "own; reads only Python, its libraries and the system's, writes only its own directory; no IP or netlink "
    "sockets)",
    UID_LANDLOCK: "uid, network open, files limited by Landlock (an unprivileged uid of its own; reads only "
    "Python, its libraries and the system's, writes only its own directory; no seccomp filter here: only TCP "
    "is closed, by Landlock, where its ABI is 4 or more)",
    UID_SECCOMP: "uid, network closed by seccomp (an unprivileged uid of its own and file permissions: no "
    "Landlock in this OS kernel, so it reads what any user may; no IP or netlink sockets)",
    UID: "uid, network open (an unprivileged uid of its own and file permissions; no seccomp filter nor Landlock here)",
    NO_SANDBOX: "none (--no-sandbox: the notebook was trusted)",
}

GIB = 2**30
MIB = 2**20


def command_line(default, flag: str, help: str, unit: int = 1):
    return field(default=default, metadata={"flag": flag, "help": help, "unit": unit})


@dataclass(frozen=True)
class ResourceLimits:
    """Limits of the kernel's processes. Memory limits what is used (RLIMIT_DATA), not what XLA reserves."""

    memory_bytes: int = command_line(4 * GIB, "--memory-gib", "memory the kernel may use", unit=GIB)
    max_processes: int = 256  # a JAX kernel runs 40–55 threads; threads count as processes
    max_file_bytes: int = 256 * 2**20
    write_bytes: int = command_line(
        256 * MIB, "--write-mib", "what the kernel may write: its folder, TMPDIR and /dev/shm together", unit=MIB
    )

    def prlimit_args(self) -> list[str]:
        return [
            f"--data={self.memory_bytes}",
            f"--nproc={self.max_processes}",
            f"--fsize={self.max_file_bytes}",
            "--core=0",
        ]


@dataclass(frozen=True)
class Limits:
    """How long and how loud a submission may be, and its kernel's sandbox."""

    cell_timeout: float = command_line(120.0, "--cell-timeout", "seconds per cell")
    total_timeout: float = command_line(600.0, "--timeout", "seconds for the whole notebook")
    startup_timeout: float = 60.0
    output_bytes_per_cell: int = 1_000_000
    output_bytes_total: int = 8_000_000
    # the kernel's malloc gives freed memory back (False: keeps large blocks, faster); None: saved where
    # memory is short (kernels/malloc.memory_decided)
    saves_memory: bool | None = None
    sandbox: ResourceLimits | None = command_line(  # None: no sandbox (trusted notebooks only)
        ResourceLimits(), "--no-sandbox", "run the kernel without bubblewrap (only for notebooks you trust)"
    )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Limits:
        sandbox = data["sandbox"]
        return cls(**{**data, "sandbox": None if sandbox is None else ResourceLimits(**sandbox)})


TRUSTED_LIMITS = Limits(sandbox=None)  # the project's own notebooks (solutions, their mutants): no sandbox

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
