"""The programs a run of a lab's solution compiled, kept for the runs of the course's own notebooks that
follow (``autograder test``'s known-grade cases), never for a student's.

Each kernel of a lab compiles the lab's programs again: about half of a notebook's run on a CPU, and most
of it the given code run on the answers' values, so what the solution compiled is what a right answer
compiles. JAX's persistent compilation cache can hand it over, and two rules keep that safe:

- **an entry is native code, loaded as it is**: only a run of the lab's solution (the course's own file,
  never a submission) writes entries, into a folder in its own working directory, and only a run that
  ran every cell leaves them; the harness copies them into the lab's folder under the machine's cache
  directory (``compiled_programs_folder``), private to the harness's user, made whole by one rename and
  never added to;
- **they are the solution, compiled**: a kernel that could read them, or only tell whether a program of
  its own is among them, would have an answer key. So a student's kernel never sees them: only the run
  of a notebook the course wrote (its solution, a known-grade case of ``autograder test``) gets a copy
  of its own, in its working directory, and reads it without writing (its minimum compile time for a
  write is beyond any compilation).

A program missing from the copy is compiled as it would be without it. The folder's name holds the lab,
its solution's content, Python's and JAX's versions and the harness's device settings: a change to any of
them starts a new folder. Deleting the folders is always safe.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from autograder.caches import cache_root, make_private_dirs
from autograder.run.kernels.devices import HARNESS_ENV

COMPILED_PROGRAMS_VARIABLE = "AUTOGRADER_COMPILED_PROGRAMS"  # "off": every kernel compiles all it runs
KERNEL_DIR = ".compiled"  # in a kernel's working directory: what it writes, or its copy to read
NEVER_WRITE_SECONDS = 1e9  # a reading kernel's minimum compile time for a write: none is that long
MAX_BYTES = 512 * 2**20  # what one lab's folder may hold; a larger filling is not kept
ENTRY_SUFFIX = "-cache"  # JAX's name for an entry's file (its lru_cache.py)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompiledPrograms:
    """A lab's folder of compiled programs, as the run of one of the course's own notebooks uses it:
    ``fill`` for the run of the lab's solution while no run has left the folder, else read."""

    folder: Path
    fill: bool = False

    def left(self) -> bool:
        """Has a run of the solution left the folder (whole, and the harness user's alone)?"""
        return _is_ours(self.folder)


def compiled_programs_folder(lab_id: str, solution: Path) -> Path:
    """The folder for the programs of ``lab_id`` whose solution is the notebook ``solution``."""
    digest = hashlib.sha256()
    digest.update(solution.read_bytes())
    versions = {name: _version(name) for name in ("jax", "jaxlib")}
    digest.update(json.dumps([sys.version, versions, HARNESS_ENV], sort_keys=True).encode())
    return cache_root() / "compiled-programs" / f"{lab_id}-{digest.hexdigest()[:24]}"


def settings_code(directory: Path, writes: bool) -> str:
    """Kernel code, run after JAX's import and before anything compiles: compiled programs are looked up
    in ``directory``, and written there only when ``writes``. Options this JAX lacks are skipped: the run
    then simply compiles."""
    options = {
        "jax_compilation_cache_dir": str(directory),
        "jax_persistent_cache_min_compile_time_secs": 0.0 if writes else NEVER_WRITE_SECONDS,
        "jax_persistent_cache_min_entry_size_bytes": 0,
        "jax_compilation_cache_max_size": -1,  # no eviction: no lock file, no access times written
        "jax_persistent_cache_enable_xla_caches": "none",  # XLA's own caches would write in the folder
    }
    return (
        f"for _ag_name, _ag_value in {options!r}.items():\n"
        "    try:\n"
        "        _ag_jax.config.update(_ag_name, _ag_value)\n"
        "    except Exception:\n"
        "        pass\n"
        "del _ag_name, _ag_value\n"
    )


def copy_for_kernel(folder: Path, workdir: Path) -> bool:
    """Put a copy of the lab's folder in a kernel's working directory, for it alone to read; False when
    no run has left the folder."""
    if not _is_ours(folder):
        return False
    target = workdir / KERNEL_DIR
    target.mkdir()
    _copy(_entries(folder), target, 0o644)
    os.chmod(target, 0o755)  # the kernel's user reads it; its working directory is its own
    return True


def leave(workdir: Path, folder: Path) -> bool:
    """Copy what the solution's kernel (working in ``workdir``, now ended) compiled into ``folder``, made
    whole by one rename; False when nothing was kept (nothing compiled, too much, already there)."""
    source = workdir / KERNEL_DIR
    if _is_ours(folder) or not source.is_dir():
        return False
    entries = _entries(source)
    if not entries or sum(p.lstat().st_size for p in entries) > MAX_BYTES:
        return False
    try:
        make_private_dirs(folder.parent)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder.parent))
        _copy(entries, staging, 0o600)
        try:
            staging.rename(folder)
        except OSError:  # another grader left it first
            shutil.rmtree(staging, ignore_errors=True)
            return False
    except OSError as exc:
        log.warning("the solution's compiled programs were not kept: %s", exc)
        return False
    return True


def _copy(entries: list[Path], target: Path, mode: int) -> None:
    for entry in entries:
        shutil.copyfile(entry, target / entry.name, follow_symlinks=False)
        os.chmod(target / entry.name, mode)


def _entries(folder: Path) -> list[Path]:
    """The entries JAX wrote: regular files under its name for them (no link, nothing else)."""
    return [p for p in sorted(folder.iterdir()) if p.name.endswith(ENTRY_SUFFIX) and _is_regular(p)]


def _is_ours(folder: Path) -> bool:
    """A real folder (not a link) of this user's that no one else may write, in a parent likewise."""
    return _owned(folder) and _owned(folder.parent)


def _owned(directory: Path) -> bool:
    try:
        info = directory.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
