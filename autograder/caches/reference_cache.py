"""Reference results kept on disk, so that every grading process on a machine computes them once, keyed by
everything the result depends on, so that a change of any of them is never read from an old entry."""

from __future__ import annotations

import ast
import contextlib
import fcntl
import functools
import hashlib
import importlib.util
import json
import logging
import math
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder.caches.machine_cache import cache_root, make_private_dirs
from autograder.caches.reference_entry import EntryError, decode, encode, read_entry, write_entry
from autograder.doors import door_origin, is_type_checking_block

PACKAGE = "autograder"
JAX_SETTINGS = ("jax_enable_x64", "jax_threefry_partitionable", "jax_default_matmul_precision", "jax_default_prng_impl")

log = logging.getLogger(__name__)
_MISSING = object()


def references_dir() -> Path:
    return cache_root() / "references"


def _imported_modules(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The modules of this package a module's source imports at run time; a name from a door counts as its
    own module's."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = importlib.util.resolve_name("." * node.level + base, package)
            found.add(base)
            found.update(door_origin(base, alias.name) for alias in node.names)
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def _run_time_nodes(tree: ast.AST):
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if is_type_checking_block(node):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def source_files(module: str) -> dict[str, Path]:
    """The source file of ``module`` and of every module of this package it imports, transitively, by name."""
    files: dict[str, Path] = {}
    todo, seen = [module], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue  # a name imported from a module, not a module itself
        files[name] = Path(spec.origin)
        is_package = spec.submodule_search_locations is not None
        todo.extend(_imported_modules(ast.parse(files[name].read_bytes()), name, is_package))
    return files


@functools.cache
def source_hash(module: str) -> str:
    """A sha256 of the sources ``source_files`` finds for ``module``."""
    digest = hashlib.sha256()
    for name, path in sorted(source_files(module).items()):
        source = path.read_bytes()
        digest.update(f"{name}\0{len(source)}\0".encode() + source)
    return digest.hexdigest()


def environment() -> dict[str, Any]:
    """What reference results depend on besides their code: library versions, platform, devices, settings."""
    import jax
    import jaxlib

    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
        "platform": jax.default_backend(),
        "devices": jax.device_count(),
        "settings": {name: str(getattr(jax.config, name, None)) for name in JAX_SETTINGS},
    }


def _argument(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"{where}: a cached reference's float arguments must be finite, found {value}")
        return value
    if isinstance(value, tuple):
        return [_argument(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(
        f"{where}: a cached reference takes numbers, strings, bools, None or tuples of them; "
        f"found a {type(value).__name__}"
    )


@dataclass(frozen=True)
class Reference:
    key: dict
    path: Path


@contextlib.contextmanager
def computing_alone(entry: Path) -> Iterator[None]:
    """Held while this process computes and stores ``entry``; it waits while another process does, instead of
    computing the same reference beside it. A cache it cannot write has no lock."""
    lock = entry.with_name(f".{entry.name}.lock")
    try:
        make_private_dirs(entry.parent)
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # a cache it cannot write: no other process can store the entry either
        yield
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
    finally:
        os.close(descriptor)


class CachedReference:
    """``@cached_reference``: keep a function's results in this process and on disk, for every later process.

    For deterministic reference functions only: never for measurements (timings). Arguments must be
    numbers, strings, bools, None or tuples of them; results nested tuples, lists or dicts of arrays and
    plain scalars. Arrays come back as read-only numpy arrays."""

    def __init__(self, function: Callable):
        functools.update_wrapper(self, function)
        self.function = function
        self._memo: dict[tuple, Any] = {}
        self._lock = threading.RLock()

    def reference(self, *args: Any) -> Reference:
        arguments = [_argument(a, f"{self.function.__qualname__} argument {i}") for i, a in enumerate(args)]
        key = {
            "module": self.function.__module__,
            "function": self.function.__qualname__,
            "arguments": arguments,
            "code": source_hash(self.function.__module__),
            "environment": environment(),
        }
        name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
        return Reference(key, references_dir() / self.function.__module__ / f"{name}.npz")

    def stored(self, *args: Any) -> bool:
        return self._load(self.reference(*args), args, said=True) is not _MISSING

    def __call__(self, *args: Any) -> Any:
        try:
            value = self._memo.get(args, _MISSING)
        except TypeError:  # an unhashable argument: refused with a clear message below
            self.reference(*args)
            raise
        if value is not _MISSING:
            return value
        with self._lock:
            value = self._memo.get(args, _MISSING)
            if value is _MISSING:
                value = self._load_or_compute(args)
                self._memo[args] = value
        return value

    def _load_or_compute(self, args: tuple) -> Any:
        ref = self.reference(*args)
        value = self._load(ref, args)
        if value is not _MISSING:
            return value
        with computing_alone(ref.path):
            value = self._load(ref, args, said=True)  # stored by another process while this one waited
            if value is not _MISSING:
                return value
            value = self.function(*args)
            description, arrays = encode(value)  # a TypeError here is the reference's own mistake: raised
            try:
                write_entry(ref.path, ref.key, value)
            except OSError as exc:
                log.warning("could not store %s%s in %s: %s", self.function.__qualname__, args, ref.path, exc)
        # Return what a later process will read: the same types (numpy, not JAX, arrays), read-only.
        return decode(description, arrays)

    def _load(self, ref: Reference, args: tuple, said: bool = False) -> Any:
        """The stored value, or _MISSING where there is none or it cannot be trusted (logged unless
        ``said`` already)."""
        try:
            return read_entry(ref.path, ref.key)
        except FileNotFoundError:
            return _MISSING
        except EntryError as exc:
            if not said:
                log.warning(
                    "recomputing %s%s: its cache entry %s is not valid (%s)",
                    self.function.__qualname__,
                    args,
                    ref.path,
                    exc,
                )
            return _MISSING

    def cache_clear(self) -> None:
        """Forget the results memoised in this process (the disk entries stay)."""
        with self._lock:
            self._memo.clear()


cached_reference = CachedReference
