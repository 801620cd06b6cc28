"""Limiting the kernel's files without namespaces: a Landlock ruleset it puts on itself before ipykernel, run
as a script from a copy in the kernel's directory, so it imports the standard library alone (hence ctypes)."""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import stat
import sys
from pathlib import Path

# The same numbers on every architecture (the generic system call table).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
RESTRICT_SELF_LOG_SAME_EXEC_OFF = 1  # ABI 7
LAUNCHER_NAME = ".landlock.py"

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FS_RIGHTS_ABI_1 = (1 << 13) - 1  # EXECUTE ... MAKE_SYM
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # all a rule on a non-directory may hold
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


class LandlockUnavailable(OSError):
    """Landlock cannot restrict this process; the message says why."""


def handled_rights(abi: int) -> tuple[int, int, int]:
    """(file rights, network rights, scopes): all this file knows that ABI version ``abi`` offers."""
    fs = FS_RIGHTS_ABI_1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0) | (IOCTL_DEV if abi >= 5 else 0)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return fs, net, scoped


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 8 + 4 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _failure(call: str) -> LandlockUnavailable:
    return LandlockUnavailable(f"{call}: {os.strerror(ctypes.get_errno())}")


def abi_version() -> int:
    """The OS kernel's Landlock ABI version; raises ``LandlockUnavailable`` where it has none."""
    version = _libc().syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    if version < 0:
        raise _failure("landlock_create_ruleset (Landlock is not enabled in this OS kernel)")
    return int(version)


def _create_ruleset(libc: ctypes.CDLL, abi: int) -> tuple[int, int]:
    """A ruleset fd and its file rights; an OS kernel that refuses part of its version (RHEL 9's ABI 6 has
    no signal scope) gets one without scopes, then without TCP."""
    fs, net, scoped = handled_rights(abi)
    for net_rights, scopes in ((net, scoped), (net, 0), (0, 0)):
        attr = _RulesetAttr(fs, net_rights, scopes)
        size = 24 if scopes else 16 if net_rights else 8  # the struct as the version that added the field
        fd = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd >= 0:
            return int(fd), fs
    raise _failure("landlock_create_ruleset")


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # nothing there to allow (a system without /lib64)
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        if libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise _failure(f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def restrict(read: list[str], write: list[str], listed: list[str]) -> int:
    """Restrict this process and all it starts; the ABI version used."""
    abi = abi_version()
    libc = _libc()
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _failure("prctl(PR_SET_NO_NEW_PRIVS)")
    ruleset, fs = _create_ruleset(libc, abi)
    try:
        for path in read:
            _allow(libc, ruleset, path, READ_RIGHTS & fs)
        for path in write:
            _allow(libc, ruleset, path, fs)
        for path in listed:
            _allow(libc, ruleset, path, READ_DIR & fs)
        flags = RESTRICT_SELF_LOG_SAME_EXEC_OFF if abi >= 7 else 0
        if libc.syscall(SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(flags)) != 0:
            raise _failure("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def parse(args: list[str]) -> tuple[list[str], list[str], list[str], list[str]]:
    """``--read``, ``--write`` and ``--list PATH`` options, ``--``, the command: (read, write, listed, argv)."""
    paths: dict[str, list[str]] = {"--read": [], "--write": [], "--list": []}
    while args and args[0] != "--":
        option, path, args = args[0], args[1], args[2:]
        paths[option].append(path)
    return paths["--read"], paths["--write"], paths["--list"], args[1:]


def main(args: list[str]) -> None:
    read, write, listed, argv = parse(args)
    try:
        restrict(read, write, listed)
    except OSError as exc:
        sys.exit(f"Landlock could not limit the kernel's files: {exc}")
    os.execv(argv[0], argv)


def landlock_command(
    argv: list[str], read: list[Path], write: list[Path], listed: list[Path], directory: Path | None = None
) -> list[str]:
    """``argv`` behind the allow-list: this file, from a copy in ``directory`` (the kernel's own)."""
    script = Path(__file__)
    if directory is not None:
        script = Path(shutil.copyfile(script, directory / LAUNCHER_NAME))
        os.chmod(script, 0o644)
    kinds = (("--read", read), ("--write", write), ("--list", listed))
    options = [(kind, str(path)) for kind, paths in kinds for path in paths]
    return [sys.executable, "-I", "-S", str(script), *(part for option in options for part in option), "--", *argv]


# What landlock_problem runs behind Landlock: refused the file outside its allow-list, it writes the one inside.
TRIAL = """
import sys
try:
    open(sys.argv[1]).read(); print('open')
except PermissionError:
    open(sys.argv[2], 'w').write('x'); print('limited')
"""


@functools.cache
def landlock_problem() -> str | None:
    """Why Landlock cannot limit a kernel's files here, or None (tried once per process)."""
    import subprocess
    import tempfile

    try:
        abi_version()
    except OSError as exc:
        return str(exc)
    with tempfile.TemporaryDirectory(prefix="autograder-landlock-trial-") as scratch:
        outside, inside = Path(scratch, "outside"), Path(scratch, "inside")
        outside.write_text("x")
        inside.mkdir()
        python = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        system = [Path(p) for p in ("/usr", "/lib", "/lib64", "/etc")]
        argv = [sys.executable, "-I", "-S", "-c", TRIAL, str(outside), str(inside / "written")]
        command = landlock_command(argv, [*sorted(python), *system], [inside], [])
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"Landlock could not be tried: {exc}"
    if done.stdout.strip() != "limited":
        return f"Landlock did not limit a process's files: {(done.stderr.strip() or done.stdout.strip())[:500]}"
    return None


if __name__ == "__main__":
    main(sys.argv[1:])
