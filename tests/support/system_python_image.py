"""Gradescope's image built by the zip's setup.sh on the distribution's own Python, for tests: once per
session, on a thread, so that it can run beside other work.

The build is pip on one core for about 40 seconds. test_gradescope_container.py starts it as it begins:
its installation's steps and its slowest run, the default container's in half a CPU, leave the machine
idle much of the time, and none of its runs' timing verdicts is judged, so the build's load changes
nothing there (measured here: the two modules took 148 s one after the other, 113 s so). The image's
module, test_gradescope_image.py, reads the build, building it then if nothing started it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

from gradescope_session import GRADESCOPE_LAB, remove_scratch, traversable_scratch, unpack_zip
from worker_groups import together

from autograder.course.gradescope_zip import build_autograder_zip

SYSTEM_PYTHON = Path("/usr/bin/python3.11")
IMAGE_TEST_MODULE = "test_gradescope_image"  # the module that reads the build
# Both modules' mark: on two workers (worker_groups.py), the module that starts the build and the one that
# reads it share one, or the build would be made on each.
SHARES_THE_BUILD = together("system-python-image")

_lock = threading.Lock()
_started: tuple[Path, Future] | None = None  # the build's scratch folder and its future, once started


def pip_cache() -> str:
    """The machine's pip cache, so that a second build downloads nothing."""
    done = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True)
    return done.stdout.strip() or str(Path.home() / ".cache" / "pip")


def run_setup(source: Path, scratch: Path, **variables) -> subprocess.CompletedProcess:
    """setup.sh of the unpacked zip at ``source``, its venv and command under ``scratch``, with ``variables``."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "PIP_CACHE_DIR": pip_cache(),
        "AUTOGRADER_GRADESCOPE_NO_APT": "1",
        "AUTOGRADER_GRADESCOPE_VENV": str(scratch / "venv"),
        "AUTOGRADER_GRADESCOPE_BIN": str(scratch / "bin"),
        "TMPDIR": str(scratch),  # where setup.sh keeps its log when it fails: removed with the scratch folder
        **variables,
    }
    return subprocess.run(["bash", str(source / "setup.sh")], env=env, capture_output=True, text=True, timeout=900)


def _build(scratch: Path) -> tuple[Path, Path, subprocess.CompletedProcess | None]:
    source = unpack_zip(build_autograder_zip(GRADESCOPE_LAB, scratch / "autograder.zip"), scratch / "root")
    if not SYSTEM_PYTHON.is_file():
        return source, scratch, None
    return source, scratch, run_setup(source, scratch, AUTOGRADER_GRADESCOPE_PYTHON=str(SYSTEM_PYTHON))


def start_build() -> Future:
    """The session's build (the unpacked zip's source, its scratch folder, and setup.sh's run on the system
    Python, or None where that Python is missing), started now on a thread of its own unless it was."""
    global _started
    with _lock:
        if _started is None:
            scratch = traversable_scratch()
            pool = ThreadPoolExecutor(1, thread_name_prefix="system-python-image")
            _started = scratch, pool.submit(_build, scratch)
            pool.shutdown(wait=False)
        return _started[1]


def remove_build() -> None:
    """Wait for the session's build, if one was started, and remove its folder, whether it was made or not."""
    global _started
    with _lock:
        started, _started = _started, None
    if started is not None:
        scratch, build = started
        wait([build])
        remove_scratch(scratch)
