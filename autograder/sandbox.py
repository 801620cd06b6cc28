"""The kernel's sandbox: bubblewrap around ipykernel, as an unprivileged user, with resource limits.

Inside, the kernel sees a read-only system (``/usr``, ``/etc`` and the Python installation), its own
empty ``/tmp`` and home, no network, its own process tree, and exactly one writable directory: the run's
working directory, holding a copy of the submission. The project (solutions, graders, hidden checks),
the installed ``autograder`` package and other students' files are not there. Limits on processes,
file size and memory are set with ``prlimit``; run as root, the kernel drops to a uid of its own with
no capabilities (``setpriv``), one per kernel, so the process limit counts its processes alone.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import psutil

import autograder

SANDBOX_UIDS = range(60000, 90000)
_uids_in_use: set[int] = set()
_uids_lock = threading.Lock()


@dataclass(frozen=True)
class ResourceLimits:
    """Limits of the kernel's processes. Memory limits what is used (RLIMIT_DATA), not what XLA reserves."""

    memory_bytes: int = 4 * 2**30
    max_processes: int = 256  # a JAX kernel runs 40–55 threads; threads count as processes
    max_file_bytes: int = 256 * 2**20

    def prlimit_args(self) -> list[str]:
        return [f"--data={self.memory_bytes}", f"--nproc={self.max_processes}",
                f"--fsize={self.max_file_bytes}", "--core=0"]


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot confine a kernel on this machine; the message says why."""


def sandbox_uid() -> int | None:
    """A uid for one sandboxed kernel when the grader is root, None when not (bwrap maps the user).

    Every kernel gets a uid no other process is running as, even kernels started side by side by one
    grading process: the process limit then counts that kernel's processes alone, and what the kernel
    left behind can be found by its uid. Give it back with ``release_sandbox_uid``."""
    if os.geteuid() != 0:
        return None
    with _uids_lock:
        running = {p.info["uids"].real for p in psutil.process_iter(["uids"]) if p.info.get("uids")}
        while True:
            uid = random.SystemRandom().choice(SANDBOX_UIDS)
            if uid not in _uids_in_use and uid not in running:
                _uids_in_use.add(uid)
                return uid


def release_sandbox_uid(uid: int | None) -> None:
    with _uids_lock:
        _uids_in_use.discard(uid)


def _readonly_roots() -> list[Path]:
    roots = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return sorted(roots)


def _parents(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if p != Path("/")]


def bwrap_command(argv: list[str], workdir: Path, readonly: list[Path], env: dict[str, str],
                  limits: ResourceLimits, uid: int | None) -> list[str]:
    """The command that runs ``argv`` in the sandbox, with ``workdir`` its only writable directory."""
    command = ["prlimit", *limits.prlimit_args(), "--", "bwrap"]
    for system in ("/usr", "/etc"):
        command += ["--ro-bind", system, system]
    for link in ("lib", "lib64", "bin", "sbin"):
        if Path("/", link).is_symlink():
            command += ["--symlink", os.readlink(Path("/", link)), f"/{link}"]
        elif Path("/", link).is_dir():
            command += ["--ro-bind", f"/{link}", f"/{link}"]
    command += ["--dev", "/dev", "--proc", "/proc", "--perms", "01777", "--tmpfs", "/tmp",
                "--perms", "01777", "--tmpfs", "/dev/shm"]
    made: set[Path] = set()
    for path in [*_readonly_roots(), *readonly, workdir]:
        for parent in _parents(path):
            if parent not in made and str(parent) not in ("/usr", "/etc", "/tmp"):
                command += ["--perms", "0755", "--dir", str(parent)]  # traversable by the kernel's user
                made.add(parent)
    for path in _readonly_roots():
        command += ["--ro-bind", str(path), str(path)]
    package = Path(autograder.__file__).resolve().parent
    if any(package.is_relative_to(root) for root in _readonly_roots()):
        command += ["--tmpfs", str(package)]  # an installed copy holds the graders: hide it
    for path in readonly:
        command += ["--ro-bind", str(path), str(path)]
    command += ["--bind", str(workdir), str(workdir)]
    command += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--clearenv", "--chdir", str(workdir)]
    for key, value in sorted(env.items()):
        command += ["--setenv", key, value]
    if uid is None:
        command += ["--unshare-user", "--"]
    else:
        command += ["--", "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                    "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return command + argv


def sandbox_environment(base: dict[str, str]) -> dict[str, str]:
    """The kernel's whole environment inside the sandbox: the harness's settings, nothing inherited."""
    keep = {k: v for k, v in base.items() if k in ("XLA_FLAGS", "JAX_PLATFORMS", "PJRT_NPROC", "PYTHONHASHSEED")}
    return {**keep, "HOME": "/tmp", "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "LANG": "C.UTF-8", "MPLCONFIGDIR": "/tmp/.matplotlib", "IPYTHONDIR": "/tmp/.ipython"}


@functools.cache
def sandbox_problem() -> str | None:
    """Why kernels cannot be sandboxed here, or None when bubblewrap works (tried once per process)."""
    for tool in ("bwrap", "prlimit") + (("setpriv",) if os.geteuid() == 0 else ()):
        if shutil.which(tool) is None:
            package = "bubblewrap" if tool == "bwrap" else "util-linux"
            return f"`{tool}` is not installed (Debian package {package})"
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    argv = [sys.executable, "-c", "print('ok')"]
    uid = sandbox_uid()
    command = bwrap_command(argv, probe, [], {}, ResourceLimits(), uid)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start: {exc}"
    finally:
        release_sandbox_uid(uid)
    if done.returncode != 0 or done.stdout.strip() != "ok":
        return f"bubblewrap could not start a process: {done.stderr.strip()[:500]} (are user namespaces enabled?)"
    return None
