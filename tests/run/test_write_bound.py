"""What a kernel writes is bounded: a cell that writes files until refused stops within ``write_bytes``
with a clear error that names the bound (run/sandbox/write_bound.py's tmpfs), the tasks before it keep their facts,
the run goes on to its end, and the kernel's files are gone afterwards. At each level: bubblewrap, and the
uid level (bubblewrap left out). Where the grader may not mount (Gradescope's container), a watch stops the
kernel soon after it passed the bound (run/sandbox/write_bound.py) and the run ends naming it."""

import errno
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from uid_level import at_the_uid_level

import autograder.run.kernels.lifecycle
import autograder.run.sandbox.write_bound
from autograder.facts.capture import TaskCapture
from autograder.run.execute import RunRequest, execute_plan
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.bubblewrap import sandbox_problem
from autograder.run.sandbox.confinement import confined_command, filter_problem
from autograder.run.sandbox.limits import Limits, ResourceLimits
from autograder.run.sandbox.write_bound import MIB, WriteWatch, explain_write_error, remove_owned, remove_root

BOUND = 32 * MIB

# Files of 4 MiB, one after another, in each place the kernel may write, until a write is refused.
FILL = """
import errno, os, tempfile
places = [os.getcwd(), tempfile.gettempdir()] + (['/dev/shm'] if SHM else [])
written, made = 0, []
try:
    while True:
        path = os.path.join(places[len(made) % len(places)], f'fill-{len(made)}')
        made.append(path)
        with open(path, 'wb') as f:
            for _ in range(4):
                f.write(b'x' * 2**20)
                f.flush()
                written += 2**20
except OSError as e:
    refused = e.errno
    raise
"""
FREE = """
import os
for path in made:
    if os.path.exists(path):
        os.remove(path)
"""


def _fill(shm: bool = True):
    limits = Limits(cell_timeout=60, total_timeout=300, sandbox=ResourceLimits(write_bytes=BOUND))
    steps = (
        RunCell("before = 1", "student", "t1", 1, "cell 1"),
        CaptureTask("t1"),
        RunCell(f"SHM = {shm}\n" + FILL, "student", "t2", 2, "cell 2"),
        CaptureTask("t2"),
        RunCell(FREE, "student", "t3", 3, "cell 3"),
        CaptureTask("t3"),
    )
    captures = {
        "t1": TaskCapture("t1", names=("before",)),
        "t2": TaskCapture("t2", names=("written",)),
        "t3": TaskCapture("t3", names=("written", "refused")),
    }
    return execute_plan(RunRequest(Plan(steps, ()), captures, limits, seed=1))


@pytest.fixture
def private_tmp(monkeypatch):
    """The kernels' roots made in a folder of the test's own, to find what they leave behind."""
    folder = Path(tempfile.mkdtemp(prefix="wb-"))
    folder.chmod(0o755)  # the uid level's kernel must reach its root
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    for root in folder.iterdir():
        remove_root(root)  # a test that failed may have left one mounted
    shutil.rmtree(folder, ignore_errors=True)


def _mounts_under(folder: Path) -> list[str]:
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines() if str(folder) in line]


def _check(execution, folder: Path):
    assert execution.status == "completed", execution.reason
    assert execution.facts["t1"].names["before"].value == 1  # the task before keeps its facts
    filler = execution.cells[1]
    assert filler.error is not None and "No space left on device" in filler.error, filler.error
    assert f"may write {BOUND // MIB} MiB" in filler.error and "--write-mib" in filler.error
    facts = execution.facts["t3"].names  # the run went on, and a later cell could free the space
    assert facts["refused"].value == 28
    assert BOUND / 2 < facts["written"].value <= BOUND
    assert not [p for p in folder.iterdir() if (p / "work").exists()]  # the kernel's root is gone
    assert not list(folder.rglob("fill-*")) and not list(Path("/dev/shm").glob("fill-*"))
    assert not _mounts_under(folder)


pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a tmpfs for the kernel needs a grader that may mount: root"),
]


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no bubblewrap here: {sandbox_problem()}")
def test_under_bubblewrap_the_folder_tmp_and_dev_shm_are_bounded_together(private_tmp):
    _check(_fill(), private_tmp)


def test_at_the_uid_level_the_folder_and_tmpdir_are_bounded(private_tmp, monkeypatch):
    with at_the_uid_level(monkeypatch):
        _check(_fill(shm=False), private_tmp)


def test_the_error_names_the_bound_only_for_a_write_it_refused():
    full = "OSError: [Errno 28] No space left on device: 'fill-3'"
    assert "--write-mib" in explain_write_error(full, BOUND)
    assert explain_write_error(full, None) == full  # not bounded: the machine's disk was full
    assert explain_write_error("ValueError: no", BOUND) == "ValueError: no"
    assert explain_write_error(None, BOUND) is None


def _no_mount(monkeypatch) -> list[WriteWatch]:
    """The grader may not mount (as in Gradescope's container): the watches made, to read."""
    monkeypatch.setattr(autograder.run.kernels.lifecycle, "bound_root", lambda root, size: "no right to mount here")
    watches: list[WriteWatch] = []

    class Recorded(WriteWatch):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            watches.append(self)

    monkeypatch.setattr(autograder.run.kernels.lifecycle, "WriteWatch", Recorded)
    return watches


def _check_stopped(execution, folder: Path, watches: list[WriteWatch]):
    assert execution.status == "kernel died" and execution.ended_at == "cell 2", execution.reason
    assert f"wrote more than {BOUND // MIB} MiB" in execution.reason and "--write-mib" in execution.reason
    assert execution.facts["t1"].names["before"].value == 1  # the task before keeps its facts
    (watch,) = [w for w in watches if w.passed]
    assert BOUND < watch.stopped_at < BOUND + 512 * MIB  # stopped soon after: within a look or two
    assert not [p for p in folder.iterdir() if (p / "work").exists()]
    assert not list(folder.rglob("fill-*")) and not list(Path("/dev/shm").glob("fill-*"))


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no bubblewrap here: {sandbox_problem()}")
def test_under_bubblewrap_without_a_tmpfs_a_watch_stops_the_kernel(private_tmp, monkeypatch):
    watches = _no_mount(monkeypatch)
    _check_stopped(_fill(), private_tmp, watches)


def test_at_the_uid_level_without_a_tmpfs_a_watch_stops_the_kernel_and_counts_dev_shm(private_tmp, monkeypatch):
    watches = _no_mount(monkeypatch)
    with at_the_uid_level(monkeypatch):
        _check_stopped(_fill(), private_tmp, watches)


def test_a_watch_counts_each_inode_once_and_a_shared_folders_files_of_its_uid_alone(tmp_path):
    root, shared = tmp_path / "root", tmp_path / "shared"
    root.mkdir(), shared.mkdir()
    (root / "a").write_bytes(b"x" * MIB)
    os.link(root / "a", root / "a-again")
    (shared / "mine").write_bytes(b"x" * MIB)
    (shared / "theirs").write_bytes(b"x" * MIB)
    os.chown(shared / "theirs", 4321, 4321)
    stopped = []
    watch = WriteWatch(root, [shared], os.geteuid(), 3 * MIB, lambda: stopped.append(True))
    try:
        assert 2 * MIB <= watch.usage() < 3 * MIB and not watch.passed
        (shared / "more").write_bytes(b"x" * 2 * MIB)
        for _ in range(50):
            if stopped:
                break
            time.sleep(0.05)
        assert stopped == [True] and watch.passed and watch.stopped_at > 3 * MIB
    finally:
        watch.close()
    remove_owned(shared, os.geteuid())
    assert [p.name for p in shared.iterdir()] == ["theirs"]


FALLOCATE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open('big', os.O_CREAT | os.O_WRONLY)
kept_size = libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(2**30))  # FALLOC_FL_KEEP_SIZE
print(kept_size, ctypes.get_errno(), end=' ')
os.posix_fallocate(fd, 0, 2**20)  # glibc writes the blocks instead
print(os.fstat(fd).st_size, os.fstat(fd).st_blocks * 512 < 2**21)
"""


@pytest.mark.skipif(filter_problem() is not None, reason=f"no seccomp filter here: {filter_problem()}")
def test_behind_the_filter_fallocate_takes_no_disk_past_the_per_file_limit(tmp_path):
    """One fallocate call with FALLOC_FL_KEEP_SIZE would take a gigabyte before a watch could look."""
    done = subprocess.run(
        confined_command([sys.executable, "-c", FALLOCATE], seccomp=True),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == ["-1", str(errno.EOPNOTSUPP), str(2**20), "True"], done.stderr


def test_a_tmpfs_takes_a_quarter_of_a_containers_memory_at_most(tmp_path, monkeypatch):
    """A tmpfs is memory that killing the kernel does not free: in 768 MB, 256 MiB of it is the disk's."""
    monkeypatch.setattr(autograder.run.sandbox.write_bound, "memory_limit_bytes", lambda: 768 * 10**6)
    assert "quarter of the container's 732 MiB" in autograder.run.sandbox.write_bound.bound_root(tmp_path, 256 * MIB)
    assert not _mounts_under(tmp_path)
