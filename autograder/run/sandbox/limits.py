"""What a submission's run may take, declared once with its defaults (a field with ``command_line`` is also an
option: cli/options.py), and the sandbox's levels with the sentence a result shows for each. Imports nothing
heavy: the command line reads them before any kernel."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

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
