"""The cache directory, and JAX's compilation cache under it (``xla/``). The grader trusts what is in it, so
every folder it creates there is private to the grader's user; deleting the directory is always safe."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

CACHE_DIR_VARIABLE = "AUTOGRADER_CACHE_DIR"
# Compilations shorter than this are not worth a file (a read costs a few ms); the grader's references
# compile in 0.2–2 s here.
MIN_COMPILE_SECONDS = 0.1
# A bound on the compilation cache; JAX evicts the least recently used entries beyond it, and with a
# bound it takes a file lock around each read and write, so concurrent graders never see a partial file.
MAX_COMPILATION_CACHE_BYTES = 2 * 2**30

log = logging.getLogger(__name__)


def cache_root() -> Path:
    configured = os.environ.get(CACHE_DIR_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("autograder", appauthor=False))


def make_private_dirs(folder: Path) -> None:
    """``mkdir -p`` with every folder it creates private to this user."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)


def enable_compilation_cache() -> Path | None:
    """Turn on JAX's compilation cache for this (grader) process only: a kernel's environment drops every
    ``JAX_`` variable. None when the folder cannot be created (grading then simply compiles)."""
    folder = cache_root() / "xla"
    try:
        make_private_dirs(folder)
    except OSError as exc:
        log.warning("no compilation cache: cannot create %s (%s)", folder, exc)
        return None
    settings = {
        "compilation_cache_dir": str(folder),
        "persistent_cache_min_compile_time_secs": MIN_COMPILE_SECONDS,
        "compilation_cache_max_size": MAX_COMPILATION_CACHE_BYTES,
    }
    os.environ.update({f"JAX_{name.upper()}": str(value) for name, value in settings.items()})
    if "jax" in sys.modules:  # too late for the environment to be read: set the options themselves
        import jax

        for name, value in settings.items():
            jax.config.update(f"jax_{name}", value)
    return folder
