"""The sandbox on its own: what a process inside can see, reach, write and use (no kernel needed)."""

import errno
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from gradescope_session import traversable_scratch
from network_attempts import ONLY_SUCCESS, Listeners, attempts_code, setuid_root_copy_of_id
from searchable_python import python_searchable_by_all, restore_modes

import autograder
from autograder.run.kernels import KERNEL_MALLOC_ENV
from autograder.run.sandbox import bubblewrap
from autograder.run.sandbox.bubblewrap import (
    bwrap_command,
    kernel_allowlist,
    readable_by_others,
    sandbox_environment,
    sandbox_level,
    sandbox_problem,
    uid_command,
)
from autograder.run.sandbox.confinement import (
    ConfinementUnavailable,
    abi_version,
    confined_command,
    filter_problem,
    filter_program,
    landlock_problem,
)
from autograder.run.sandbox.limits import ResourceLimits
from autograder.run.sandbox.uid_lease import SandboxUnavailable, UidLease, lease_uid, make_private

needs_bwrap = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the uid level needs root (CI runs as root)")
needs_filter = pytest.mark.skipif(filter_problem() is not None, reason=f"no network filter here: {filter_problem()}")
needs_landlock = pytest.mark.skipif(
    landlock_problem() is not None, reason=f"no Landlock in this OS kernel: {landlock_problem()}"
)

PROJECT = Path(autograder.__file__).resolve().parents[1]


def run_inside(tmp_path, code, limits=ResourceLimits(), env=None):
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    lease = lease_uid()
    if lease is not None:
        os.chmod(tmp_path, 0o755)
        make_private(workdir, lease.uid)
    try:
        command = bwrap_command(
            [sys.executable, "-c", textwrap.dedent(code)], workdir, [], env or {}, limits, lease and lease.uid
        )
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    finally:
        if lease is not None:
            lease.release()
    return done.stdout.strip(), done.stderr, done.returncode


@needs_bwrap
def test_the_project_and_the_installed_graders_are_invisible(tmp_path):
    out, err, _ = run_inside(
        tmp_path,
        f"""
        import os, importlib.util
        print(os.path.exists({str(PROJECT)!r}), os.path.exists({str(PROJECT / "solutions")!r}),
              importlib.util.find_spec('autograder') is not None)
    """,
    )
    assert out == "False False False", err


@needs_bwrap
def test_only_the_working_directory_is_writable(tmp_path):
    out, err, _ = run_inside(
        tmp_path,
        """
        import os
        ok = []
        for path in ['result.json', '/usr/x', '/etc/x', '/x', os.path.expanduser('~/x'), '/tmp/x']:
            try:
                open(path, 'w').write('forged'); ok.append(path)
            except OSError:
                pass
        print(ok)
    """,
    )
    assert out == "['result.json', '/tmp/x']", err  # /tmp is the sandbox's own, empty and private
    assert (tmp_path / "work" / "result.json").exists()


@needs_bwrap
def test_no_network_not_even_the_hosts_loopback(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        out, err, _ = run_inside(
            tmp_path,
            f"""
            import socket
            try:
                socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')
            except OSError as exc:
                print('refused')
        """,
        )
    assert out == "refused", err


@needs_bwrap
def test_runs_unprivileged_in_its_own_process_tree_without_the_hosts_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "hunter2")
    out, err, _ = run_inside(
        tmp_path,
        """
        import os
        pids = [p for p in os.listdir('/proc') if p.isdigit()]
        print(os.getuid() != 0, len(pids) < 5 and os.getpid() < 10, 'GRADER_SECRET' in os.environ)
    """,
        env={"A": "1"},
    )
    assert out == "True True False", err


# Allocates past the memory limit and writes past the file-size limit of LIMITS.
LIMITS = ResourceLimits(memory_bytes=2 * 2**30, max_processes=64, max_file_bytes=2**20)
MEMORY_AND_FILE = """
try:
    b = bytearray(3 * 2**30); print('allocated')
except MemoryError:
    print('MemoryError')
try:
    open('big', 'wb').write(b'x' * 2**21); print('wrote')
except OSError as exc:
    print('EFBIG')
"""


@needs_bwrap
def test_resource_limits_hold(tmp_path):
    out, err, _ = run_inside(
        tmp_path,
        MEMORY_AND_FILE
        + """
import os
children = 0
for _ in range(200):
    try:
        if os.fork() == 0:
            import time; time.sleep(3); os._exit(0)
        children += 1
    except OSError:
        break
print(children < 64)
""",
        LIMITS,
    )
    assert out.split() == ["MemoryError", "EFBIG", "True"], err


# The uid level: what bubblewrap cannot give in Gradescope's container (root, no user namespaces).


@pytest.fixture(scope="module")
def uid_scratch():
    """A scratch folder every user can search, and a Python the kernel's uid can run."""
    restore = python_searchable_by_all()
    scratch = traversable_scratch()
    private = scratch / "harness"  # stands for the graders and results: private to root, as run_autograder makes them
    private.mkdir(mode=0o700)
    (private / "test_lab.py").write_text("hidden check")
    out, err = run_as_uid(scratch, "print('ok')")
    if out != "ok":
        restore_modes(restore)
        subprocess.run(["rm", "-rf", str(scratch)], check=False)
        pytest.skip(
            f"an unprivileged uid cannot run {sys.executable} here (its files must be readable "
            f"by every user): {err.strip()[-300:]}"
        )
    yield scratch
    restore_modes(restore)
    subprocess.run(["rm", "-rf", str(scratch)], check=False)


def run_as_uid(scratch, code, limits=ResourceLimits(), network_filter=False, landlock=False, env=None):
    lease = UidLease()
    home = Path(tempfile.mkdtemp(dir=scratch, prefix="home-"))
    make_private(home, lease.uid)
    try:
        base = {**KERNEL_MALLOC_ENV, "XLA_FLAGS": "x", "GRADER_SECRET": "hunter2"}  # as kernel_environment() gives
        env = sandbox_environment(env or base, str(home))
        argv = [sys.executable, "-c", textwrap.dedent(code)]
        if landlock or network_filter:
            argv = confined_command(argv, home, network_filter, kernel_allowlist(home, []) if landlock else None)
        command = uid_command(argv, env, limits, lease.uid)
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=home)
    finally:
        lease.release()
    return done.stdout.strip(), done.stderr


@needs_root
def test_uid_level_reads_and_writes_only_its_own_directory(uid_scratch):
    out, err = run_as_uid(
        uid_scratch,
        f"""
        import os
        ok = []
        for path in [{str(uid_scratch / "harness" / "test_lab.py")!r}, '/etc/shadow']:
            try:
                open(path).read(); ok.append('read ' + path)
            except OSError:
                pass
        for path in ['mine', {str(uid_scratch / "harness" / "x")!r}, {str(uid_scratch / "x")!r}, '/usr/x', '/etc/x']:
            try:
                open(path, 'w').write('forged'); ok.append('write ' + os.path.basename(path))
            except OSError:
                pass
        print(ok, os.getcwd() == os.environ['HOME'], oct(os.stat('.').st_mode & 0o777))
    """,
    )
    assert out == "['write mine'] True 0o700", err


@needs_root
def test_uid_level_has_no_privileges_no_environment_and_cannot_signal_the_grader(uid_scratch):
    out, err = run_as_uid(
        uid_scratch,
        """
        import ctypes, os
        status = dict(line.split(':', 1) for line in open('/proc/self/status'))
        try:
            os.kill(os.getppid(), 0); signalled = True
        except PermissionError:
            signalled = False
        death_signal = ctypes.c_int()
        ctypes.CDLL(None).prctl(2, ctypes.byref(death_signal))  # PR_GET_PDEATHSIG: killed with the grader
        print(os.getuid() >= 60000, os.getgroups(), int(status['CapEff'], 16), status['NoNewPrivs'].strip(),
              sorted(os.environ), signalled, death_signal.value)
    """,
    )
    assert out == (
        "True [] 0 1 ['HOME', 'IPYTHONDIR', 'LANG', 'MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', "
        "'MPLCONFIGDIR', 'PATH', "
        "'TMPDIR', 'XLA_FLAGS'] "
        "False 9"
    ), err


@needs_root
def test_uid_level_runs_the_systems_own_tools_whatever_path_holds(uid_scratch, monkeypatch, tmp_path):
    """Commands named like the sandbox's first in PATH (a folder of tools, busybox) are not what runs as
    root: prlimit, setpriv and env come from the system's folders (uid_lease.py)."""
    for name in ("prlimit", "setpriv", "env"):
        (tmp_path / name).write_text("#!/bin/sh\necho not the system tool >&2\nexit 3\n")
        (tmp_path / name).chmod(0o755)
    (tmp_path / "choom").mkdir()  # a folder of that name: found by a lookup that does not look twice
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    out, err = run_as_uid(uid_scratch, "print('ok')")
    assert out == "ok", err
    monkeypatch.setattr(bubblewrap, "readable_by_others", lambda path: False)  # as on Gradescope
    assert bubblewrap.uid_sandbox_problem.__wrapped__() is None


def test_a_missing_system_tool_is_named_with_the_one_path_offers_instead(monkeypatch, tmp_path):
    from autograder.run.sandbox import uid_lease

    (tmp_path / "nonesuch-tool").write_text("#!/bin/sh\n")
    (tmp_path / "nonesuch-tool").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    problem = uid_lease.system_tool_problem("nonesuch-tool")
    assert problem.startswith("`nonesuch-tool` is not installed in the system's folders (/usr/local/sbin")
    assert f"PATH's `{tmp_path / 'nonesuch-tool'}` is not the system's, and is not used" in problem
    assert uid_lease.system_tool_problem("env") is None and uid_lease.system_tool("env").startswith("/")


@needs_root
def test_uid_level_resource_limits_hold(uid_scratch):
    out, err = run_as_uid(uid_scratch, MEMORY_AND_FILE, LIMITS)
    assert out.split() == ["MemoryError", "EFBIG"], err


@needs_root
@needs_filter
def test_uid_level_behind_the_filter_opens_no_network_and_cannot_lift_the_filter(uid_scratch):
    setuid_id = setuid_root_copy_of_id(uid_scratch)
    with Listeners() as listeners:
        out, err = run_as_uid(
            uid_scratch, attempts_code(listeners.tcp_port, listeners.udp_port, setuid_id), network_filter=True
        )
        reached = listeners.reached()
        assert out, err
        attempts = json.loads(out)
        assert {name for name, outcome in attempts.items() if outcome == "succeeded"} == ONLY_SUCCESS, attempts
        assert (
            attempts["connect to the loopback"] == "EAFNOSUPPORT"
            and attempts["netlink socket"] == errno.errorcode[errno.EOPNOTSUPP]
        ), attempts
        assert reached == []
        # the same uid without the filter reaches the listener: what the filter closes was open
        out, err = run_as_uid(
            uid_scratch,
            f"""
            import socket
            socket.create_connection(('127.0.0.1', {listeners.tcp_port}), timeout=3).close()
            print('connected')
        """,
        )
        assert out == "connected", err
        assert len(listeners.reached()) == 1


HOSTILE_READS = """
import json, os
attempts = {}
def attempt(name, action):
    try:
        action()
        attempts[name] = 'succeeded'
    except OSError as exc:
        attempts[name] = type(exc).__name__
for name, path in READS.items():
    attempt('read ' + name, lambda p=path: open(p).read())
    attempt('list the folder of ' + name, lambda p=path: os.listdir(os.path.dirname(p)))
attempt('write a folder open to all', lambda: open(WRITABLE, 'w').write('forged'))
attempt('write its own directory', lambda: open('mine', 'w').write('mine'))
print(json.dumps(attempts))
"""


@pytest.fixture
def readable_by_all(uid_scratch):
    """What file permissions leave open to any user: a TA's clone of the course beside the grader's
    folder, a file in a folder of the shared /tmp, and a folder anyone may write; the code that tries them."""
    clone = uid_scratch / "ta-clone" / "solutions" / "lab2_three_ways"
    clone.mkdir(parents=True)
    (clone / "lab2_three_ways.ipynb").write_text('{"cells": ["the answer"]}')
    shared = Path(tempfile.mkdtemp(prefix="autograder-shared-"))
    (shared / "notes.txt").write_text("another user's notes")
    writable = uid_scratch / "drop"
    writable.mkdir()
    for path in [*clone.parents[: len(clone.parents) - len(uid_scratch.parents) - 1], clone, shared, writable]:
        os.chmod(path, 0o1777 if path == writable else 0o755)
    for path in (clone / "lab2_three_ways.ipynb", shared / "notes.txt"):
        os.chmod(path, 0o644)
    reads = {"a solution notebook": str(clone / "lab2_three_ways.ipynb"), "a file in /tmp": str(shared / "notes.txt")}
    yield f"READS = {reads!r}\nWRITABLE = {str(writable / 'forged')!r}\n" + HOSTILE_READS
    subprocess.run(["rm", "-rf", str(shared)], check=False)


@needs_root
@needs_landlock
def test_uid_level_behind_landlock_reads_nothing_outside_its_allow_list(uid_scratch, readable_by_all):
    out, err = run_as_uid(uid_scratch, readable_by_all, network_filter=filter_problem() is None, landlock=True)
    assert out, err
    assert json.loads(out) == {
        "read a solution notebook": "PermissionError",
        "list the folder of a solution notebook": "PermissionError",
        "read a file in /tmp": "PermissionError",
        "list the folder of a file in /tmp": "PermissionError",
        "write a folder open to all": "PermissionError",
        "write its own directory": "succeeded",
    }
    # the same uid without Landlock reads and writes them all: what Landlock closes was open
    out, err = run_as_uid(uid_scratch, readable_by_all)
    assert out, err
    assert set(json.loads(out).values()) == {"succeeded"}, out


@needs_root
@needs_landlock
def test_uid_level_behind_landlock_alone_connects_to_no_tcp_port(uid_scratch):
    with socket.create_server(("127.0.0.1", 0)) as server:
        out, err = run_as_uid(
            uid_scratch,
            f"""
            import socket
            try:
                socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), timeout=3).close()
                print('connected')
            except OSError as exc:
                print(type(exc).__name__)
        """,
            landlock=True,
        )
    assert out == ("PermissionError" if abi_version() >= 4 else "connected"), err  # TCP rights came in ABI 4


def test_the_filter_refuses_a_machine_it_has_no_table_for():
    assert len(filter_program("x86_64")) % 8 == 0 and len(filter_program("aarch64")) % 8 == 0
    with pytest.raises(ConfinementUnavailable, match="riscv64"):
        filter_program("riscv64")


def test_each_live_kernel_holds_a_uid_of_its_own():
    first, second = UidLease(), UidLease()
    try:
        assert first.uid != second.uid
    finally:
        first.release()
        second.release()
    third = UidLease()
    third.release()
    assert third.uid == first.uid  # released uids are used again


def test_readable_by_others_follows_the_directories_above(tmp_path):
    os.chmod(tmp_path, 0o755)
    (tmp_path / "open").mkdir(mode=0o755)
    (tmp_path / "open" / "f").write_text("x")
    (tmp_path / "closed").mkdir(mode=0o700)
    (tmp_path / "closed" / "f").write_text("x")
    assert readable_by_others(tmp_path / "open" / "f") is (
        os.stat(tmp_path.parent).st_mode & 0o001 != 0 and all(os.stat(p).st_mode & 0o001 for p in tmp_path.parents)
    )
    assert not readable_by_others(tmp_path / "closed" / "f")
    assert not readable_by_others(tmp_path / "missing")


def test_the_level_is_bubblewrap_then_uid_with_or_without_the_filter_and_landlock_then_a_refusal(monkeypatch):
    monkeypatch.setattr(bubblewrap, "sandbox_problem", lambda: None)
    assert sandbox_level() == "bubblewrap"
    monkeypatch.setattr(bubblewrap, "sandbox_problem", lambda: "`bwrap` is not installed")
    monkeypatch.setattr(bubblewrap, "uid_sandbox_problem", lambda: None)
    monkeypatch.setattr(bubblewrap, "filter_problem", lambda: None)
    monkeypatch.setattr(bubblewrap, "landlock_problem", lambda: None)
    assert sandbox_level() == "uid+seccomp+landlock"
    monkeypatch.setattr(bubblewrap, "landlock_problem", lambda: "landlock_create_ruleset: Not supported")
    assert sandbox_level() == "uid+seccomp"
    monkeypatch.setattr(bubblewrap, "filter_problem", lambda: "prctl(PR_SET_SECCOMP): Invalid argument")
    assert sandbox_level() == "uid"
    monkeypatch.setattr(bubblewrap, "landlock_problem", lambda: None)
    assert sandbox_level() == "uid+landlock"
    monkeypatch.setattr(bubblewrap, "uid_sandbox_problem", lambda: "it needs root")
    with pytest.raises(
        SandboxUnavailable,
        match="`bwrap` is not installed; and the uid sandbox cannot either: it needs root.*--no-sandbox",
    ):
        sandbox_level()


def test_the_uid_level_refuses_without_root_or_while_the_graders_are_readable(monkeypatch):
    check = bubblewrap.uid_sandbox_problem.__wrapped__
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "needs root" in check()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(bubblewrap, "readable_by_others", lambda path: True)
    assert "the harness's files are readable by any user" in check()


def test_without_root_and_without_bubblewrap_grading_refuses(tmp_path, monkeypatch, capsys):
    from autograder.cli import main

    monkeypatch.setattr(bubblewrap, "sandbox_problem", lambda: "`bwrap` is not installed")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(
        bubblewrap,
        "uid_sandbox_problem",
        bubblewrap.uid_sandbox_problem.__wrapped__,
    )
    assert main(["grade", str(PROJECT / "assignments" / "lab2_three_ways" / "lab2_three_ways.ipynb")]) == 2
    err = capsys.readouterr().err
    assert (
        "cannot sandbox the kernel: `bwrap` is not installed; and the uid sandbox cannot either: it needs root" in err
    )


@needs_bwrap
def test_a_sandboxed_kernel_is_not_restarted(tmp_path):
    import asyncio

    from autograder.run.kernels.manager import HarnessKernelManager

    (tmp_path / "work").mkdir()
    os.chmod(tmp_path, 0o755)
    km = HarnessKernelManager(tmp_path / "work", tmp_path / "kernel.log", ResourceLimits())
    try:
        with pytest.raises(RuntimeError, match="not restarted"):
            asyncio.run(km.restart_kernel())
    finally:
        if km.uid_lease is not None:
            km.uid_lease.release()
