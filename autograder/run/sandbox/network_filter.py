"""Closing the network to the kernel without namespaces: a seccomp filter it installs on itself, run as a
script from a copy in the kernel's directory, so it imports the standard library alone. Netlink is refused
with ``EOPNOTSUPP``, which ZeroMQ's ``getifaddrs`` takes for "no interfaces" (any other error aborts it)."""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import shutil
import struct
import sys
from pathlib import Path

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
LD_ABS_W, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
NR_OFFSET, ARCH_OFFSET, ARG0_OFFSET = 0, 4, 16  # struct seccomp_data; args[0]'s low word (little-endian)
AF_UNIX, AF_NETLINK = 1, 16
X32_SYSCALL_BIT = 0x40000000
LAUNCHER_NAME = ".network_filter.py"

# machine: (AUDIT_ARCH_*, socket, socketpair, fallocate (EOPNOTSUPP), [EPERM: ptrace, io_uring_setup, pidfd_getfd])
SYSCALLS = {
    "x86_64": (0xC000003E, 41, 53, 285, [101, 425, 438]),
    "aarch64": (0xC00000B7, 198, 199, 47, [117, 425, 438]),
}


class FilterUnavailable(OSError):
    """The filter cannot be installed here; the message says why."""


def _instruction(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def filter_program(machine: str) -> bytes:
    if machine not in SYSCALLS:
        raise FilterUnavailable(f"no filter for the {machine} architecture")
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
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise FilterUnavailable(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    fprog = _SockFprog(len(program) // 8, program)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise FilterUnavailable(f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")


def main(argv: list[str]) -> None:
    try:
        install()
    except OSError as exc:
        sys.exit(f"the network filter could not be installed: {exc}")
    os.execv(argv[0], argv)


def filter_command(argv: list[str], directory: Path | None = None) -> list[str]:
    """``argv`` behind the filter: this file, from a copy in ``directory`` (the kernel's own)."""
    script = Path(__file__)
    if directory is not None:
        script = Path(shutil.copyfile(script, directory / LAUNCHER_NAME))
        os.chmod(script, 0o644)
    return [sys.executable, "-I", "-S", str(script), *argv]


# What filter_problem runs behind the filter: it may open no IP or netlink socket, and still a Unix one.
TRIAL = """
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


@functools.cache
def filter_problem() -> str | None:
    """Why the filter cannot close the network here, or None (tried once per process)."""
    import subprocess

    if platform.machine() not in SYSCALLS:
        return f"no seccomp filter for the {platform.machine()} architecture"
    command = filter_command([sys.executable, "-I", "-S", "-c", TRIAL])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the seccomp filter could not be tried: {exc}"
    if done.stdout.strip() != "closed":
        return f"the seccomp filter did not close the network: {(done.stderr.strip() or done.stdout.strip())[:500]}"
    return None


if __name__ == "__main__":
    main(sys.argv[1:])
