"""Landlock at the uid level: the rights each ABI version handles, the allow-list, and a kernel behind it
that runs a sharded JAX computation but reads no course file it was not given."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gradescope_session import traversable_scratch
from uid_level import at_the_uid_level

from autograder.facts.capture import TaskCapture
from autograder.paths import PACKAGE_DIR
from autograder.run.execute import RunRequest, execute_plan
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.bubblewrap import kernel_allowlist, sandbox_level, without
from autograder.run.sandbox.confinement import (
    IOCTL_DEV,
    NET_BIND_TCP,
    NET_CONNECT_TCP,
    REFER,
    SCOPE_ABSTRACT_UNIX_SOCKET,
    SCOPE_SIGNAL,
    TRUNCATE,
    confined_command,
    filter_problem,
    handled_rights,
    parse,
)
from autograder.run.sandbox.limits import Limits


def test_each_abi_version_handles_the_rights_it_brought_and_no_later_ones():
    first = (1 << 13) - 1
    assert handled_rights(1) == (first, 0, 0)
    assert handled_rights(2) == (first | REFER, 0, 0)
    assert handled_rights(3) == handled_rights(4)[:1] + (0, 0) == (first | REFER | TRUNCATE, 0, 0)
    assert handled_rights(4)[1] == NET_BIND_TCP | NET_CONNECT_TCP
    assert handled_rights(5)[0] == first | REFER | TRUNCATE | IOCTL_DEV
    assert handled_rights(6)[2] == SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    assert handled_rights(7) == handled_rights(6) == handled_rights(9)  # ABI 7 adds log flags; later: what we know


def test_the_launcher_reads_its_allow_list_then_the_command():
    args = ["--landlock", "--read", "/usr", "--write", "/w", "--list", "/v", "--read", "/etc", "--", "python", "--read"]
    assert parse(args) == (False, (["/usr", "/etc"], ["/w"], ["/v"]), ["python", "--read"])
    assert parse(["--seccomp", "--", "python"]) == (True, None, ["python"])
    assert parse(["--", "python", "--seccomp"]) == (False, None, ["python", "--seccomp"])


def test_the_launcher_reads_what_its_command_was_given():
    allowlist = ([Path("/usr")], [Path("/w")], [])
    command = confined_command(["python", "--landlock"], seccomp=True, allowlist=allowlist)
    assert parse(command[4:]) == (True, (["/usr"], ["/w"], []), ["python", "--landlock"])
    assert parse(confined_command(["python"])[4:]) == (False, None, ["python"])


def test_a_folder_is_allowed_without_the_package_inside_it(tmp_path):
    site = tmp_path / "venv" / "lib" / "site-packages"
    (site / "autograder" / "labs").mkdir(parents=True)
    (site / "jax").mkdir()
    (site / "autograder-0.1.dist-info").mkdir()
    (tmp_path / "venv" / "bin").mkdir()
    (tmp_path / "venv" / "lib64").symlink_to("lib")  # a venv's link to the folder holding the package
    read, listed = without(tmp_path / "venv", site / "autograder")
    assert sorted(read) == [tmp_path / "venv" / "bin", site / "autograder-0.1.dist-info", site / "jax"]
    assert listed == [tmp_path / "venv", site.parent, site]  # Python lists them to import and read .pth files
    assert without(tmp_path / "elsewhere", site / "autograder") == ([tmp_path / "elsewhere"], [])


def test_the_kernels_allow_list_holds_python_and_the_system_but_not_the_harness(tmp_path):
    read, write, listed = kernel_allowlist(tmp_path / "work", [tmp_path / "modules"])
    assert write[0] == tmp_path / "work" and Path("/tmp") not in write
    assert {Path("/usr"), Path("/etc"), tmp_path / "modules", Path(sys.prefix).resolve()} <= set(read)
    package = PACKAGE_DIR.resolve()
    assert not [p for p in read + write if package.is_relative_to(p) or p.is_relative_to(package)]
    assert all(package.is_relative_to(p) for p in listed)


# A kernel at the uid level, as in Gradescope's container: bubblewrap is not used, Landlock is.

CELL = """
import os
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ('x',))
x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P('x')))
total = float(jax.jit(lambda a: (a * 2).sum())(x))
shards = len(x.addressable_shards)
found = []
for root in ('/tmp', os.path.dirname(SOLUTION), os.path.dirname(os.path.dirname(CHECKOUT))):
    for folder, _, files in os.walk(root):
        found += [os.path.join(folder, f) for f in files if f.endswith('.ipynb')]
refused = []
for path in (SOLUTION, CHECKOUT):
    try:
        open(path).read()
    except PermissionError:
        refused.append(path)
found, refused = ' '.join(found), ' '.join(refused)  # facts of plain values
"""


@pytest.fixture
def uid_level(monkeypatch):
    """Bubblewrap left out, the uid level allowed though this checkout is readable by any user (Landlock
    keeps it from the kernel), and a Python the kernel's uid can run; a course's clone readable by all."""
    with at_the_uid_level(monkeypatch):
        scratch = traversable_scratch()
        clone = scratch / "ta-clone" / "solutions"
        clone.mkdir(parents=True)
        (clone / "lab2_three_ways.ipynb").write_text('{"cells": ["the answer"]}')
        for path in (scratch / "ta-clone", clone):
            os.chmod(path, 0o755)
        os.chmod(clone / "lab2_three_ways.ipynb", 0o644)
        yield clone / "lab2_three_ways.ipynb"
        subprocess.run(["rm", "-rf", str(scratch)], check=False)


def test_a_kernel_at_the_uid_level_computes_sharded_but_reads_no_solution(uid_level):
    checkout_file = PACKAGE_DIR.parent / "README.md"
    setup = f"SOLUTION, CHECKOUT = {str(uid_level)!r}, {str(checkout_file)!r}\n"
    plan = Plan((RunCell(setup + CELL, "student", "t1", 1, "cell 1"), CaptureTask("t1")), ())
    captures = {"t1": TaskCapture("t1", names=("total", "shards", "found", "refused"))}
    execution = execute_plan(RunRequest(plan, captures, Limits(cell_timeout=120, total_timeout=300), seed=1))
    assert execution.status == "completed", execution.reason
    assert [c.error for c in execution.cells] == [None]
    facts = execution.facts["t1"]
    assert facts.get("total").value == 4032.0 and facts.get("shards").value == 8
    assert facts.get("found").value == "", "the kernel listed notebooks outside its own directory"
    assert facts.get("refused").value == f"{uid_level} {checkout_file}"
    assert sandbox_level() == ("uid+seccomp+landlock" if filter_problem() is None else "uid+landlock")
