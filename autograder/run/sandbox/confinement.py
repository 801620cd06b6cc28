"""What a sandboxed kernel puts on itself before ipykernel, for it and all it starts, and cannot lift: a
seccomp filter that closes its network and, at the uid level, a Landlock ruleset that limits its files. One
launcher applies both, run as a script from a copy in the kernel's directory, so it imports the standard
library alone (hence ctypes). Netlink is refused with ``EOPNOTSUPP``, which ZeroMQ's ``getifaddrs`` takes for
"no interfaces" (any other error aborts it)."""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import shutil
import stat
import struct
import sys
from pathlib import Path

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
LAUNCHER_NAME = ".confinement.py"

# The seccomp filter.
RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
LD_ABS_W, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
NR_OFFSET, ARCH_OFFSET, ARG0_OFFSET = 0, 4, 16  # struct seccomp_data; args[0]'s low word (little-endian)
AF_UNIX, AF_NETLINK = 1, 16
X32_SYSCALL_BIT = 0x40000000

# machine: (AUDIT_ARCH_*, socket, socketpair, fallocate (EOPNOTSUPP), [EPERM: ptrace, io_uring_setup, pidfd_getfd])
SYSCALLS = {
    "x86_64": (0xC000003E, 41, 53, 285, [101, 425, 438]),
    "aarch64": (0xC00000B7, 198, 199, 47, [117, 425, 438]),
}

# Landlock: the same numbers on every architecture (the generic system call table).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RESTRICT_SELF_LOG_SAME_EXEC_OFF = 1  # ABI 7

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FS_RIGHTS_ABI_1 = (1 << 13) - 1  # EXECUTE ... MAKE_SYM
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # all a rule on a non-directory may hold
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

Allowlist = tuple[list[Path], list[Path], list[Path]]  # what Landlock lets be read, written and only listed


class ConfinementUnavailable(OSError):
    """The filter or Landlock cannot be put on this process; the message says why."""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    return libc


def _failure(call: str) -> ConfinementUnavailable:
    return ConfinementUnavailable(f"{call}: {os.strerror(ctypes.get_errno())}")


def _no_new_privs(libc: ctypes.CDLL) -> None:
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise _failure("prctl(PR_SET_NO_NEW_PRIVS)")


def _instruction(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def filter_program(machine: str) -> bytes:
    if machine not in SYSCALLS:
        raise ConfinementUnavailable(f"no filter for the {machine} architecture")
    arch, socket_nr, socketpair_nr, fallocate_nr, refused = SYSCALLS[machine]
    program = [
        _instruction(LD_ABS_W, ARCH_OFFSET),
        _instruction(JEQ_K, arch, jt=1),
        _instruction(RET_K, RET_KILL_PROCESS),
        _instruction(LD_ABS_W, NR_OFFSET),
    ]
    if machine == "x86_64":
        program += [_instruction(JGE_K, X32_SYSCALL_BIT, jf=1), _instruction(RET_K, RET_ERRNO | errno.ENOSYS)]
    for number in refused:
        program += [_instruction(JEQ_K, number, jf=1), _instruction(RET_K, RET_ERRNO | errno.EPERM)]
    program += [_instruction(JEQ_K, fallocate_nr, jf=1), _instruction(RET_K, RET_ERRNO | errno.EOPNOTSUPP)]
    program += [
        _instruction(JEQ_K, socket_nr, jt=2),
        _instruction(JEQ_K, socketpair_nr, jt=1),
        _instruction(RET_K, RET_ALLOW),
        _instruction(LD_ABS_W, ARG0_OFFSET),
        _instruction(JEQ_K, AF_UNIX, jf=1),
        _instruction(RET_K, RET_ALLOW),
        _instruction(JEQ_K, AF_NETLINK, jf=1),
        _instruction(RET_K, RET_ERRNO | errno.EOPNOTSUPP),
        _instruction(RET_K, RET_ERRNO | errno.EAFNOSUPPORT),
    ]
    return b"".join(program)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install() -> None:
    """Set ``no_new_privs`` and install the filter on this process and all it starts."""
    program = filter_program(platform.machine())
    libc = _libc()
    _no_new_privs(libc)
    fprog = _SockFprog(len(program) // 8, program)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise _failure("prctl(PR_SET_SECCOMP)")


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


def abi_version() -> int:
    """The OS kernel's Landlock ABI version; raises ``ConfinementUnavailable`` where it has none."""
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


def restrict(read: list[str], write: list[str], listed: list[str]) -> None:
    """Restrict this process and all it starts."""
    abi = abi_version()
    libc = _libc()
    _no_new_privs(libc)
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


def parse(args: list[str]) -> tuple[bool, tuple[list[str], list[str], list[str]] | None, list[str]]:
    """``confined_command``'s options, ``--``, the command: (seccomp, the allow-list or None, argv)."""
    flags = {"--seccomp": False, "--landlock": False}
    paths: dict[str, list[str]] = {"--read": [], "--write": [], "--list": []}
    while args and args[0] != "--":
        if args[0] in flags:
            flags[args[0]] = True
            args = args[1:]
        else:
            paths[args[0]].append(args[1])
            args = args[2:]
    allowlist = (paths["--read"], paths["--write"], paths["--list"]) if flags["--landlock"] else None
    return flags["--seccomp"], allowlist, args[1:]


def main(args: list[str]) -> None:
    seccomp, allowlist, argv = parse(args)
    if allowlist is not None:
        try:
            restrict(*allowlist)
        except OSError as exc:
            sys.exit(f"Landlock could not limit the kernel's files: {exc}")
    if seccomp:
        try:
            install()
        except OSError as exc:
            sys.exit(f"the network filter could not be installed: {exc}")
    os.execv(argv[0], argv)


def confined_command(
    argv: list[str], directory: Path | None = None, seccomp: bool = False, allowlist: Allowlist | None = None
) -> list[str]:
    """``argv`` behind the filter (``seccomp``) and Landlock's ``allowlist``: this file, from a copy in
    ``directory`` (the kernel's own)."""
    script = Path(__file__)
    if directory is not None:
        script = Path(shutil.copyfile(script, directory / LAUNCHER_NAME))
        os.chmod(script, 0o644)
    options = ["--seccomp"] if seccomp else []
    if allowlist is not None:
        options.append("--landlock")
        for kind, paths in zip(("--read", "--write", "--list"), allowlist):
            options += [part for path in paths for part in (kind, str(path))]
    return [sys.executable, "-I", "-S", str(script), *options, "--", *argv]


# What filter_problem runs behind the filter: it may open no IP or netlink socket, and still a Unix one.
FILTER_TRIAL = """
import socket
for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK):
    try:
        socket.socket(family, socket.SOCK_DGRAM).close()
        print('open'); raise SystemExit
    except OSError:
        pass
socket.socket(socket.AF_UNIX).close()
print('closed')
"""

# What landlock_problem runs behind Landlock: refused the file outside its allow-list, it writes the one inside.
LANDLOCK_TRIAL = """
import sys
try:
    open(sys.argv[1]).read(); print('open')
except PermissionError:
    open(sys.argv[2], 'w').write('x'); print('limited')
"""


def _trial_problem(command: list[str], expected: str, what: str, failed: str) -> str | None:
    """Why ``command`` did not print ``expected``: ``what`` could not be tried, or ``failed``; else None."""
    import subprocess

    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{what} could not be tried: {exc}"
    if done.stdout.strip() != expected:
        return f"{what} {failed}: {(done.stderr.strip() or done.stdout.strip())[:500]}"
    return None


@functools.cache
def filter_problem() -> str | None:
    """Why the filter cannot close the network here, or None (tried once per process)."""
    if platform.machine() not in SYSCALLS:
        return f"no seccomp filter for the {platform.machine()} architecture"
    command = confined_command([sys.executable, "-I", "-S", "-c", FILTER_TRIAL], seccomp=True)
    return _trial_problem(command, "closed", "the seccomp filter", "did not close the network")


@functools.cache
def landlock_problem() -> str | None:
    """Why Landlock cannot limit a kernel's files here, or None (tried once per process)."""
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
        argv = [sys.executable, "-I", "-S", "-c", LANDLOCK_TRIAL, str(outside), str(inside / "written")]
        command = confined_command(argv, allowlist=([*sorted(python), *system], [inside], []))
        return _trial_problem(command, "limited", "Landlock", "did not limit a process's files")


if __name__ == "__main__":
    main(sys.argv[1:])
