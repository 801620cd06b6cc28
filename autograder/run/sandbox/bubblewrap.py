"""The kernel's sandbox: bubblewrap around ipykernel where it runs, else (as root, without user namespaces)
the uid level, with the network filter and Landlock where they work; ``sandbox_level()`` picks the
strongest. What each level hides and bounds is docs/trust-boundary.md's."""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from autograder.paths import PACKAGE_DIR, CourseFileError, bundled_root, current_course
from autograder.run.sandbox.confinement import filter_problem, landlock_problem
from autograder.run.sandbox.limits import (
    BUBBLEWRAP,
    UID,
    UID_LANDLOCK,
    UID_SECCOMP,
    UID_SECCOMP_LANDLOCK,
    ResourceLimits,
)
from autograder.run.sandbox.uid_lease import (
    SandboxUnavailable,
    UidLease,
    lease_uid,
    make_private,
    setpriv_args,
    system_command,
    system_tool_problem,
)

SYSTEM = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys/devices/system/cpu"]
DEVICES_READ = ["/dev/zero", "/dev/random", "/dev/urandom"]
DEVICES_WRITE = ["/dev/null", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"]


def _readonly_roots() -> list[Path]:
    """Python's prefixes and the package folders a .pth file added outside them, never this package's."""
    roots = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    package_home = PACKAGE_DIR.parent
    for entry in sys.path:
        path = Path(entry).resolve() if entry else None
        if (
            path is not None
            and path.name in ("site-packages", "dist-packages")
            and path.is_dir()
            and path != package_home
            and not any(path.is_relative_to(root) for root in roots)
        ):
            roots.add(path)
    return sorted(roots)


def bwrap_command(
    argv: list[str],
    workdir: Path,
    readonly: list[Path],
    env: dict[str, str],
    limits: ResourceLimits,
    uid: int | None,
    tmp_and_shm: tuple[Path, Path] | None = None,
) -> list[str]:
    """``argv`` in bubblewrap, ``workdir`` its only writable folder beside its ``/tmp`` and ``/dev/shm``:
    ``tmp_and_shm``, in the kernel's bounded root (write_bound.py), or else tmpfs mounts of their own."""
    command = [system_command("prlimit"), *limits.prlimit_args(), "--", "bwrap"]
    for system in ("/usr", "/etc"):
        command += ["--ro-bind", system, system]
    for link in ("lib", "lib64", "bin", "sbin"):
        if Path("/", link).is_symlink():
            command += ["--symlink", os.readlink(Path("/", link)), f"/{link}"]
        elif Path("/", link).is_dir():
            command += ["--ro-bind", f"/{link}", f"/{link}"]
    command += ["--dev", "/dev", "--proc", "/proc"]
    for place, folder in zip(("/tmp", "/dev/shm"), tmp_and_shm or (None, None)):
        command += ["--perms", "01777", "--tmpfs", place] if folder is None else ["--bind", str(folder), place]
    roots = _readonly_roots()
    parents = [parent for path in [*roots, *readonly, workdir] for parent in reversed(path.parents)]
    for parent in dict.fromkeys(p for p in parents if str(p) not in ("/", "/usr", "/etc", "/tmp")):
        command += ["--perms", "0755", "--dir", str(parent)]  # traversable by the kernel's user
    for path in roots:
        command += ["--ro-bind", str(path), str(path)]
    if any(PACKAGE_DIR.is_relative_to(root) for root in roots):
        command += ["--tmpfs", str(PACKAGE_DIR)]  # an installed copy holds the graders: hide it
    for path in readonly:
        command += ["--ro-bind", str(path), str(path)]
    command += ["--bind", str(workdir), str(workdir)]
    command += [
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--chdir",
        str(workdir),
    ]
    for key, value in sorted(env.items()):
        command += ["--setenv", key, value]
    if uid is None:
        command += ["--unshare-user", "--"]
    else:
        command += ["--", *setpriv_args(uid), "--"]
    return command + argv


def uid_command(argv: list[str], env: dict[str, str], limits: ResourceLimits, uid: int) -> list[str]:
    """``argv`` as ``uid`` (the uid level), killed with its parent, with exactly the environment ``env``;
    its working directory must be ``uid``'s alone (``make_private``)."""
    assignments = [f"{key}={value}" for key, value in sorted(env.items())]
    return [
        system_command("prlimit"),
        *limits.prlimit_args(),
        "--",
        *setpriv_args(uid),
        "--pdeathsig=KILL",
        "--",
        system_command("env"),
        "-i",
        *assignments,
        *argv,
    ]


def sandbox_environment(base: dict[str, str], home: str = "/tmp") -> dict[str, str]:
    """The kernel's whole environment: the harness's device and malloc settings of ``base``, nothing else
    inherited; ``home`` is its own writable folder."""
    kept = ("XLA_FLAGS", "JAX_PLATFORMS", "PJRT_NPROC", "PYTHONHASHSEED")
    return {
        **{k: v for k, v in base.items() if k in kept or k.startswith("MALLOC_")},
        "HOME": home,
        "TMPDIR": home,
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": f"{home}/.matplotlib",
        "IPYTHONDIR": f"{home}/.ipython",
    }


_bubblewrap_tried = threading.Lock()


def sandbox_problem() -> str | None:
    """Why bubblewrap cannot sandbox kernels here, or None (tried once per process; other threads wait)."""
    with _bubblewrap_tried:
        return _bubblewrap_problem()


def try_bubblewrap_in_background() -> None:
    """Try bubblewrap and the network filter on a thread now, so that a grade's imports overlap the tries."""
    threading.Thread(
        target=lambda: (sandbox_problem(), filter_problem()), name="autograder-sandbox-trial", daemon=True
    ).start()


@functools.cache
def _bubblewrap_problem() -> str | None:
    if shutil.which("bwrap") is None:
        return "`bwrap` is not installed (Debian package bubblewrap)"
    for tool in ("prlimit",) + (("setpriv",) if os.geteuid() == 0 else ()):
        if problem := system_tool_problem(tool):
            return problem
    scratch = Path(os.environ.get("TMPDIR", "/tmp"))
    argv = [sys.executable, "-I", "-S", "-c", "print('ok')"]  # no site-packages to import: 0.1 s sooner
    lease = lease_uid()
    try:
        done = _run_trial(bwrap_command(argv, scratch, [], {}, ResourceLimits(), lease.uid if lease else None))
    finally:
        if lease:
            lease.release()
    if isinstance(done, str):
        return f"bubblewrap could not start: {done}"
    if done.returncode != 0 or done.stdout.strip() != "ok":
        return f"bubblewrap could not start a process: {done.stderr.strip()[:500]} (are user namespaces enabled?)"
    return None


def _run_trial(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess | str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)


def harness_paths() -> list[Path]:
    """What a kernel must not read: this package, the bundled labs' notebooks and the course folder's."""
    bundled = bundled_root()
    paths = [PACKAGE_DIR, bundled / "solutions", bundled / "assignments"]
    try:
        course = current_course()
    except CourseFileError:
        course = None
    if course is not None:
        paths += [course.root / "solutions", course.root / "assignments", course.labs_dir, course.root / "tests"]
    return list(dict.fromkeys(paths))


def readable_by_others(path: Path) -> bool:
    """Can a user with no groups reach ``path``?"""
    if not path.exists():
        return False
    for directory in [path, *path.parents]:
        if directory.is_dir() and not os.stat(directory).st_mode & stat.S_IXOTH:
            return False
    return path.is_dir() or bool(os.stat(path).st_mode & stat.S_IROTH)


@functools.cache
def uid_sandbox_problem() -> str | None:
    """Why the uid level cannot confine a kernel here, or None (checked once per process)."""
    if os.geteuid() != 0:
        return "it needs root, to run the kernel as a uid of its own"
    for tool in ("prlimit", "setpriv", "env"):
        if problem := system_tool_problem(tool):
            return problem
    exposed = [str(p) for p in harness_paths() if readable_by_others(p)]
    if exposed:
        return (
            f"the harness's files are readable by any user: {', '.join(exposed)}; make them private "
            "(chmod 0700; run_autograder does this on Gradescope)"
        )
    lease = UidLease()
    home = Path(tempfile.mkdtemp(prefix="autograder-uid-trial-"))
    try:
        make_private(home, lease.uid)
        env = sandbox_environment({}, str(home))
        done = _run_trial(uid_command([sys.executable, "-c", "print('ok')"], env, ResourceLimits(), lease.uid), home)
    finally:
        lease.release()
        shutil.rmtree(home, ignore_errors=True)
    if isinstance(done, str) or done.returncode != 0 or done.stdout.strip() != "ok":
        error = done if isinstance(done, str) else done.stderr.strip()[:500]
        return (
            f"an unprivileged uid cannot run {sys.executable}: {error} (the Python installation must be "
            "readable and searchable by every user)"
        )
    return None


def sandbox_level() -> str:
    """The strongest sandbox that works here, the one choice of every command that runs a kernel; raises
    ``SandboxUnavailable``, saying why, where there is none."""
    bwrap = sandbox_problem()
    if bwrap is None:
        return BUBBLEWRAP
    uid = uid_sandbox_problem()
    if uid is None:
        levels = {(True, True): UID_SECCOMP_LANDLOCK, (True, False): UID_SECCOMP, (False, True): UID_LANDLOCK}
        return levels.get((filter_problem() is None, landlock_problem() is None), UID)
    raise SandboxUnavailable(
        f"cannot sandbox the kernel: {bwrap}; and the uid sandbox cannot either: {uid}",
        "Grade with --no-sandbox only notebooks you trust",
    )


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
    """What a kernel at the uid level may read, write and only list, for Landlock: what bubblewrap would bind
    and no more; never the shared ``/tmp``, a home or a checkout."""
    package = PACKAGE_DIR.resolve()
    read: list[Path] = []
    listed: list[Path] = []
    for root in _readonly_roots():
        root_read, root_listed = without(root, package)
        read += root_read
        listed += root_listed
    read += [Path(p) for p in SYSTEM + DEVICES_READ] + list(readonly)
    return read, [workdir, *(Path(p) for p in DEVICES_WRITE)], listed
