"""Gradescope's container imitated on this machine: the zip unpacked into a scratch root laid out as
Gradescope's, setup.sh run into a fresh venv, and run_autograder run per submission."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.course.gradescope_zip import build_autograder_zip
from autograder.run.sandbox.confinement import filter_problem, landlock_problem

GRADESCOPE_LAB = "lab2_three_ways"  # the lab of the container's tests and of the image's; the heaviest in memory
# The level run_autograder grades at without bubblewrap on this machine.
UID_LEVEL = (
    "uid" + ("+seccomp" if filter_problem() is None else "") + ("+landlock" if landlock_problem() is None else "")
)


def traversable_scratch() -> Path:
    """A scratch folder every user can search (pytest's are private to root), as /autograder is."""
    path = Path(tempfile.mkdtemp(prefix="autograder-gradescope-test-"))
    os.chmod(path, 0o755)
    return path


class Installation:
    """The zip of ``lab`` built once (or the one given), and setup.sh run once into a venv that reuses this
    machine's packages."""

    def __init__(self, scratch: Path, zip_path: Path | None = None, lab: str = GRADESCOPE_LAB):
        self.scratch = scratch
        self.zip = zip_path or build_autograder_zip(lab, scratch / "autograder.zip")
        self.bin = scratch / "bin"
        self.cache = scratch / "image-cache"  # the reference cache setup.sh warms, as in the image
        source = self.unpack(scratch / "setup")
        env = {
            **_clean_environment(),
            "AUTOGRADER_GRADESCOPE_OFFLINE": "1",
            "AUTOGRADER_GRADESCOPE_PYTHON": sys.executable,
            "AUTOGRADER_GRADESCOPE_VENV": str(scratch / "venv"),
            "AUTOGRADER_GRADESCOPE_BIN": str(self.bin),
            "AUTOGRADER_GRADESCOPE_CACHE": str(self.cache),
            "TMPDIR": str(scratch),  # where setup.sh keeps its log when it fails: removed with the scratch folder
        }
        done = subprocess.run(["bash", str(source / "setup.sh")], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"setup.sh failed: {done.stderr}"
        self.setup_output = done.stdout + done.stderr
        self.without_bwrap = path_without(scratch / "no-bwrap", "bwrap")

    def unpack(self, root: Path) -> Path:
        return unpack_zip(self.zip, root)

    def prepare(self, name: str, files: dict[str, bytes], bwrap: bool = True) -> tuple[Path, Path, dict]:
        """A root laid out as Gradescope's holding ``files`` as the submission; its source and the
        environment run_autograder runs with (a fresh HOME)."""
        root = self.scratch / name
        source = self.unpack(root)
        (root / "submission").mkdir()
        (root / "results").mkdir()
        (root / "home").mkdir()
        os.chmod(root, 0o755)
        for filename, data in files.items():
            (root / "submission" / filename).write_bytes(data)
        path = f"{self.bin}:{os.environ['PATH'] if bwrap else self.without_bwrap}"
        env = {
            **_clean_environment(),
            "PATH": path,
            "AUTOGRADER_GRADESCOPE_ROOT": str(root),
            "HOME": str(root / "home"),
        }
        return root, source, env

    def run_autograder(
        self, name: str, files: dict[str, bytes], bwrap: bool = True, keep_runs: bool = False
    ) -> tuple[dict, str, Path]:
        """results.json, run_autograder's output and the root, for a submission of ``files``; with
        ``keep_runs``, each kernel's root is kept and named in the output (``kept_kernel_roots``)."""
        root, source, env = self.prepare(name, files, bwrap)
        if keep_runs:
            env["AUTOGRADER_KEEP_RUNS"] = "1"
        done = subprocess.run(
            [str(source / "run_autograder")], env=env, cwd=root, capture_output=True, text=True, timeout=900
        )
        results = json.loads((root / "results" / "results.json").read_text())
        return results, done.stdout + done.stderr, root

    def run_autograder_in_box(self, name: str, files: dict[str, bytes], memory_bytes: int, cpus: float):
        """results.json and the run (peak memory, out-of-memory kills, output) of run_autograder in a
        new cgroup of ``memory_bytes`` and ``cpus``, without bubblewrap (the uid level), as on Gradescope."""
        from cgroup_box import run_in_box

        root, source, env = self.prepare(name, files, bwrap=False)
        run = run_in_box([str(source / "run_autograder")], memory_bytes, cpus, env=env, cwd=root, timeout=900)
        return json.loads((root / "results" / "results.json").read_text()), run


def kept_kernel_roots(output: str) -> list[Path]:
    """The kernels' roots a run with ``AUTOGRADER_KEEP_RUNS`` kept (their working directory is ``work``)."""
    return [Path(line.split(" ", 1)[1]) for line in output.splitlines() if line.startswith("kept /")]


_UNPACK = """
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    archive.extractall(sys.argv[2])
    for info in archive.infolist():  # zipfile does not restore modes
        os.chmod(os.path.join(sys.argv[2], info.filename), info.external_attr >> 16 & 0o777)
"""


def unpack_zip(archive_path: Path, root: Path) -> Path:
    """The zip's files in ``root/source``, with their modes, as Gradescope lays them out.

    A child process writes them. Tests run several run_autograder side by side on threads. Were this
    process to write a run_autograder while another thread forks, the forked child would hold the file
    open for writing until its own exec, and running the script in that moment fails with "Text file
    busy" (ETXTBSY)."""
    subprocess.run([sys.executable, "-c", _UNPACK, str(archive_path), str(root / "source")], check=True, timeout=300)
    return root / "source"


def _clean_environment() -> dict[str, str]:
    """This environment without what points Python at the checkout (the zip's harness must be used) or
    at the suite's reference cache (the image's own is)."""
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "AUTOGRADER_ROOT", "VIRTUAL_ENV", "AUTOGRADER_CACHE_DIR")
    }


def path_without(directory: Path, tool: str) -> str:
    """A PATH with every command of this one but ``tool``: the first of each name that is a command, as a
    lookup finds it (a folder of that name, executable as folders are, is passed over)."""
    directory.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = directory / entry.name
            command = os.path.isfile(entry.path) and os.access(entry.path, os.X_OK)
            if entry.name != tool and command and not os.path.lexists(target):
                target.symlink_to(entry.path)
    return str(directory)


def remove_scratch(scratch: Path) -> None:
    shutil.rmtree(scratch, ignore_errors=True)
