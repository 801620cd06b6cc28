"""The sandbox on its own: what a process inside can see, reach, write and use (no kernel needed)."""

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import autograder
from autograder.sandbox import ResourceLimits, bwrap_command, sandbox_problem, sandbox_uid

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")

PROJECT = Path(autograder.__file__).resolve().parents[1]


def run_inside(tmp_path, code, limits=ResourceLimits(), env=None):
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    uid = sandbox_uid()
    if uid is not None:
        os.chmod(tmp_path, 0o755)
        os.chown(workdir, uid, uid)
    command = bwrap_command([sys.executable, "-c", textwrap.dedent(code)], workdir, [], env or {}, limits, uid)
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    return done.stdout.strip(), done.stderr, done.returncode


def test_the_project_and_the_installed_graders_are_invisible(tmp_path):
    out, err, _ = run_inside(tmp_path, f"""
        import os, importlib.util
        print(os.path.exists({str(PROJECT)!r}), os.path.exists({str(PROJECT / 'solutions')!r}),
              importlib.util.find_spec('autograder') is not None)
    """)
    assert out == "False False False", err


def test_only_the_working_directory_is_writable(tmp_path):
    out, err, _ = run_inside(tmp_path, """
        import os
        ok = []
        for path in ['result.json', '/usr/x', '/etc/x', '/x', os.path.expanduser('~/x'), '/tmp/x']:
            try:
                open(path, 'w').write('forged'); ok.append(path)
            except OSError:
                pass
        print(ok)
    """)
    assert out == "['result.json', '/tmp/x']", err  # /tmp is the sandbox's own, empty and private
    assert (tmp_path / "work" / "result.json").exists()


def test_no_network_not_even_the_hosts_loopback(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        out, err, _ = run_inside(tmp_path, f"""
            import socket
            try:
                socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')
            except OSError as exc:
                print('refused')
        """)
    assert out == "refused", err


def test_runs_unprivileged_in_its_own_process_tree_without_the_hosts_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "hunter2")
    out, err, _ = run_inside(tmp_path, """
        import os
        pids = [p for p in os.listdir('/proc') if p.isdigit()]
        print(os.getuid() != 0, len(pids) < 5 and os.getpid() < 10, 'GRADER_SECRET' in os.environ)
    """, env={"A": "1"})
    assert out == "True True False", err


def test_resource_limits_hold(tmp_path):
    limits = ResourceLimits(memory_bytes=2 * 2**30, max_processes=64, max_file_bytes=2**20)
    out, err, _ = run_inside(tmp_path, """
        import os
        try:
            b = bytearray(3 * 2**30); print('allocated')
        except MemoryError:
            print('MemoryError')
        try:
            open('big', 'wb').write(b'x' * 2**21); print('wrote')
        except OSError as exc:
            print('EFBIG')
        children = 0
        for _ in range(200):
            try:
                if os.fork() == 0:
                    import time; time.sleep(3); os._exit(0)
                children += 1
            except OSError:
                break
        print(children < 64)
    """, limits)
    assert out.split() == ["MemoryError", "EFBIG", "True"], err
