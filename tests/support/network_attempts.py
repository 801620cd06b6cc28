"""Code that tries to reach the network from inside the sandbox, or to lift what keeps it from it; run as
a notebook cell or a sandboxed script. ``attempts_code`` fills in the listeners' ports, a setuid-root
program and where to write the report (else it is printed): a JSON object, attempt -> 'succeeded' or
the error it met.

``Listeners`` opens a TCP and a UDP listener on 127.0.0.1 outside the sandbox and says what reached them.
"""

import os
import shutil
import socket
import stat
from pathlib import Path

ATTEMPTS = r"""
import ctypes, errno, json, os, platform, signal, socket, struct, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = libc.prctl.restype = libc.ptrace.restype = ctypes.c_long
attempts = {}

def attempt(name, action):
    try:
        action()
        attempts[name] = 'succeeded'
    except OSError as exc:
        attempts[name] = errno.errorcode.get(exc.errno, str(exc))
    except Exception as exc:
        attempts[name] = f'{type(exc).__name__}: {exc}'

def checked(result):
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result

def connect_tcp():
    socket.create_connection(('127.0.0.1', TCP_PORT), timeout=3).close()

def send_udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.sendto(b'leak', ('127.0.0.1', UDP_PORT))

ALLOW_ALL = struct.pack('HBBI', 0x06, 0, 0, 0x7FFF0000)  # BPF: return SECCOMP_RET_ALLOW
ALLOW_ALL_PROGRAM = struct.pack('HxxxxxxP', 1, ctypes.cast(ctypes.c_char_p(ALLOW_ALL), ctypes.c_void_p).value)

def second_filter_by_prctl():
    checked(libc.prctl(38, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)))
    checked(libc.prctl(22, ctypes.c_ulong(2), ctypes.c_char_p(ALLOW_ALL_PROGRAM), ctypes.c_ulong(0), ctypes.c_ulong(0)))
    connect_tcp()

def second_filter_by_seccomp():
    number = {'x86_64': 317, 'aarch64': 277}[platform.machine()]
    checked(libc.syscall(ctypes.c_long(number), ctypes.c_ulong(1), ctypes.c_ulong(0),
                         ctypes.c_char_p(ALLOW_ALL_PROGRAM)))
    connect_tcp()

def ptrace_itself():
    checked(libc.ptrace(ctypes.c_long(0), 0, None, None))  # PTRACE_TRACEME

def ptrace_a_child():
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    try:
        checked(libc.ptrace(ctypes.c_long(16), child, None, None))  # PTRACE_ATTACH
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)

def setuid_program():
    euid = subprocess.run([SETUID_ID, '-u'], capture_output=True, text=True, check=True).stdout.strip()
    if euid != '0':
        raise PermissionError(errno.EPERM, f'ran as uid {euid}')

def in_a_child_process():
    subprocess.run([sys.executable, '-c', f'import socket; socket.create_connection(("127.0.0.1", {TCP_PORT}), 3)'],
                   check=True, capture_output=True)

def io_uring():
    checked(libc.syscall(ctypes.c_long(425), 8, ctypes.create_string_buffer(120)))  # io_uring_setup

def x32_socket():
    if platform.machine() != 'x86_64':
        raise OSError(errno.ENOSYS, 'no x32 ABI on this machine')
    checked(libc.syscall(ctypes.c_long(41 | 0x40000000), 2, 1, 0))  # socket(AF_INET, SOCK_STREAM) as x32

attempt('unix socketpair', lambda: socket.socketpair(socket.AF_UNIX).__class__)
attempt('connect to the loopback', connect_tcp)
attempt('send over UDP', send_udp)
attempt('IPv6 socket', lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM).close())
attempt('netlink socket', lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close())
attempt('packet socket', lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close())
attempt('INET socketpair', lambda: socket.socketpair(socket.AF_INET))
attempt('connect from a child process', in_a_child_process)
attempt('ptrace itself', ptrace_itself)
attempt('ptrace a child', ptrace_a_child)
attempt('run a setuid-root program', setuid_program)
attempt('io_uring', io_uring)
attempt('x32 socket call', x32_socket)
attempt('a second filter by prctl, then connect', second_filter_by_prctl)
attempt('a second filter by seccomp(2), then connect', second_filter_by_seccomp)
if REPORT:
    open(REPORT, 'w').write(json.dumps(attempts))
else:
    print(json.dumps(attempts))
"""

ONLY_SUCCESS = {"unix socketpair"}  # the control: the attempts run, and Unix sockets still work


def attempts_code(tcp_port: int, udp_port: int, setuid_id: Path, report: Path | None = None) -> str:
    """The attempts; their report is written to ``report``, or printed."""
    return (
        f"TCP_PORT, UDP_PORT = {tcp_port}, {udp_port}\nSETUID_ID = {str(setuid_id)!r}\n"
        f"REPORT = {str(report) if report else None!r}\n" + ATTEMPTS
    )


def setuid_root_copy_of_id(directory: Path) -> Path:
    """A copy of ``id`` owned by root with the setuid bit: run by anyone, it says uid 0 unless
    ``no_new_privs`` holds. Needs root."""
    program = directory / "setuid-id"
    shutil.copyfile(shutil.which("id"), program)
    os.chown(program, 0, 0)
    os.chmod(program, stat.S_ISUID | 0o755)
    return program


class Listeners:
    """A TCP and a UDP listener on 127.0.0.1, outside any sandbox."""

    def __init__(self):
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.tcp_port, self.udp_port = self.tcp.getsockname()[1], self.udp.getsockname()[1]

    def __enter__(self):
        return self

    def reached(self) -> list[str]:
        """What reached the listeners so far: connections and datagrams."""
        found = []
        self.tcp.setblocking(False)
        self.udp.setblocking(False)
        try:
            while True:
                connection, peer = self.tcp.accept()
                connection.close()
                found.append(f"TCP connection from {peer}")
        except BlockingIOError:
            pass
        try:
            while True:
                found.append(f"UDP datagram {self.udp.recv(100)!r}")
        except BlockingIOError:
            pass
        return found

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()

    def __exit__(self, *exc):
        self.close()
