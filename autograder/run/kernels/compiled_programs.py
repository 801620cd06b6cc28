"""The programs a run of a lab's solution compiled, kept for the runs of the course's own notebooks that
follow, never for a student's: they are the solution, compiled (docs/trust-boundary.md)."""

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
    """``fill``: a run of the lab's solution while no run has left the folder; else it is read."""

    folder: Path
    fill: bool = False

    def left(self) -> bool:
        return _is_ours(self.folder)


def compiled_programs_folder(lab_id: str, solution: Path) -> Path:
    """Named by what changes a compilation; deleting it is always safe."""
    digest = hashlib.sha256()
    digest.update(solution.read_bytes())
    versions = {name: _version(name) for name in ("jax", "jaxlib")}
    digest.update(json.dumps([sys.version, versions, HARNESS_ENV], sort_keys=True).encode())
    return cache_root() / "compiled-programs" / f"{lab_id}-{digest.hexdigest()[:24]}"


def settings_code(directory: Path, writes: bool) -> str:
    """Kernel code, after JAX's import; an option this JAX lacks is skipped (the run then simply compiles)."""
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
    """A copy of the lab's folder for the kernel alone to read; False when no run has left one."""
    if not _is_ours(folder):
        return False
    target = workdir / KERNEL_DIR
    target.mkdir()
    _copy(_entries(folder), target, 0o644)
    os.chmod(target, 0o755)  # the kernel's user reads it; its working directory is its own
    return True


def leave(workdir: Path, folder: Path) -> bool:
    """Copy what the ended solution's kernel compiled into ``folder``, made whole by one rename; False
    when nothing was kept."""
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
    return [p for p in sorted(folder.iterdir()) if p.name.endswith(ENTRY_SUFFIX) and p.is_file() and not p.is_symlink()]


def _is_ours(folder: Path) -> bool:
    """A real folder of this user's that no one else may write, in a parent likewise."""
    return _owned(folder) and _owned(folder.parent)


def _owned(directory: Path) -> bool:
    try:
        info = directory.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
