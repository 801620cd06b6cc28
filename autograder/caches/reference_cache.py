"""Reference results kept on disk, so that every grading process on a machine computes them once.

A lab's deterministic reference functions (the lab's arrays, a model trained on one device, what a
compiled program contains) do not depend on the submission. ``@cached_reference`` stores what such a
function returns in the cache directory, and every later process on the machine (each ``autograder
grade``, each Dask worker) reads it back instead of computing it again; within one process the result is
also memoised, as ``functools.cache`` would.

The key of an entry is the function's module and qualified name, its arguments, a hash of the sources it
depends on (its module and every ``autograder`` module that module imports, transitively), the versions
of jax, jaxlib and numpy, the JAX platform and device count, and the JAX settings that change numbers.
Change any of them and the old entry is simply never looked up again.

An entry is one ``.npz`` file written atomically (temporary file, then ``os.replace``): the arrays, plus a
JSON document describing the value (nested tuples, lists and dicts of arrays, numbers, strings, bools and
None), the key, and a sha256 of each array's bytes and of the document itself. It is read with
``allow_pickle=False``; an entry that is unreadable, truncated, edited, or made for another key is
recomputed and rewritten, never trusted and never an error for the caller.

The entries live in ``references/`` under the machine's cache directory (``machine_cache.py``:
``$AUTOGRADER_CACHE_DIR``, else e.g. ``~/.cache/autograder``), in folders private to the grader's user.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import logging
import math
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autograder.caches.machine_cache import cache_root, make_private_dirs
from autograder.doors import door_origin, is_type_checking_block

FORMAT = 1
STRUCTURE_MEMBER = "structure"  # the JSON document, stored in the .npz as uint8 bytes
PACKAGE = "autograder"
JAX_SETTINGS = ("jax_enable_x64", "jax_threefry_partitionable", "jax_default_matmul_precision", "jax_default_prng_impl")

log = logging.getLogger(__name__)
_MISSING = object()


class EntryError(ValueError):
    """A cache entry that cannot be trusted: unreadable, truncated, edited, or made for another key."""


def references_dir() -> Path:
    """Where reference results are stored (``references/`` under the cache directory)."""
    return cache_root() / "references"


# The value: nested containers of arrays and plain scalars, as JSON plus a list of arrays.


def encode(value: Any) -> tuple[Any, list[np.ndarray]]:
    """A JSON-able description of ``value`` and its arrays, in the order the description numbers them.

    Raises TypeError for anything else than tuples, lists, dicts with string keys, numpy (or JAX) arrays
    and scalars, floats, ints, bools, strings and None."""
    arrays: list[np.ndarray] = []

    def walk(item: Any, where: str) -> Any:
        if item is None or isinstance(item, (bool, str)):
            return item
        if isinstance(item, int):
            return {"int": str(item)}
        if isinstance(item, float):
            return {"float": item.hex()}
        if isinstance(item, (tuple, list)):
            kind = "tuple" if isinstance(item, tuple) else "list"
            return {kind: [walk(x, f"{where}[{i}]") for i, x in enumerate(item)]}
        if isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                raise TypeError(f"{where}: a cached dict needs string keys, found {sorted(map(repr, item))[:3]}")
            return {"dict": [[k, walk(v, f"{where}[{k!r}]")] for k, v in item.items()]}
        if isinstance(item, np.generic) or (hasattr(item, "__array__") and hasattr(item, "dtype")):
            array = np.asarray(item)
            if array.dtype.hasobject or array.dtype.fields is not None:
                raise TypeError(f"{where}: an array of dtype {array.dtype} cannot be cached (objects or fields)")
            arrays.append(array)
            return {"scalar" if isinstance(item, np.generic) else "array": len(arrays) - 1}
        raise TypeError(
            f"{where}: a {type(item).__name__} cannot be cached; return arrays, numbers, "
            "strings, bools, None, and tuples, lists or dicts of them"
        )

    return walk(value, "result"), arrays


def decode(description: Any, arrays: list[np.ndarray]) -> Any:
    """The value ``encode`` described (arrays read-only); raises EntryError when the description is malformed."""

    def walk(item: Any) -> Any:
        if item is None or isinstance(item, (bool, str)):
            return item
        if not isinstance(item, dict) or len(item) != 1:
            raise EntryError(f"unexpected item in the description: {str(item)[:80]}")
        ((kind, body),) = item.items()
        if kind == "int" and isinstance(body, str):
            return int(body)
        if kind == "float" and isinstance(body, str):
            return float.fromhex(body)
        if kind in ("tuple", "list") and isinstance(body, list):
            items = [walk(x) for x in body]
            return tuple(items) if kind == "tuple" else items
        if kind == "dict" and isinstance(body, list):
            if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in body):
                raise EntryError("a dict's items must be [key, value] pairs with string keys")
            return {k: walk(v) for k, v in body}
        if (
            kind in ("array", "scalar")
            and isinstance(body, int)
            and not isinstance(body, bool)
            and 0 <= body < len(arrays)
        ):
            return arrays[body][()] if kind == "scalar" else arrays[body]
        raise EntryError(f"unexpected item in the description: {str(item)[:80]}")

    return walk(description)


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(array.tobytes()).hexdigest()  # the bytes in C order, whatever the layout


def _document_digest(document: dict) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def write_entry(path: Path, key: dict, value: Any) -> None:
    """Store ``value`` for ``key`` at ``path`` atomically (a temporary file in the same folder, then replace)."""
    description, arrays = encode(value)
    document = {
        "format": FORMAT,
        "key": key,
        "value": description,
        "arrays": [{"dtype": a.dtype.str, "shape": list(a.shape), "sha256": _digest(a)} for a in arrays],
    }
    document["sha256"] = _document_digest(document)
    members = {f"a{i}": a for i, a in enumerate(arrays)}
    members[STRUCTURE_MEMBER] = np.frombuffer(json.dumps(document).encode(), dtype=np.uint8)
    make_private_dirs(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **members)  # type: ignore[arg-type]  # numpy's stub lets **members fill allow_pickle
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_entry(path: Path, key: dict) -> Any:
    """The value stored at ``path`` for ``key``; FileNotFoundError when there is none, EntryError when the
    file is not exactly what ``write_entry`` wrote for this key."""
    try:
        stored = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise
    except Exception as exc:  # whatever a damaged file makes numpy raise: the entry is not trusted
        raise EntryError(f"unreadable entry: {type(exc).__name__}: {exc}") from None
    if not isinstance(stored, np.lib.npyio.NpzFile):
        raise EntryError("not an .npz entry")
    try:
        with stored:
            document, arrays = _checked_contents(stored, key)
    except EntryError:
        raise
    except Exception as exc:
        raise EntryError(f"unreadable entry: {type(exc).__name__}: {exc}") from None
    return decode(document["value"], arrays)


def _checked_contents(stored, key: dict) -> tuple[dict, list[np.ndarray]]:
    names = set(stored.files)
    if STRUCTURE_MEMBER not in names:
        raise EntryError("no description in the entry")
    document = json.loads(stored[STRUCTURE_MEMBER].tobytes().decode())
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise EntryError("not an entry of this format")
    recorded = document.pop("sha256", None)
    if recorded != _document_digest(document):
        raise EntryError("the description does not match its checksum")
    if document.get("key") != key:
        raise EntryError("the entry was made for another key")
    specs = document.get("arrays")
    if not isinstance(specs, list) or names != {STRUCTURE_MEMBER} | {f"a{i}" for i in range(len(specs))}:
        raise EntryError("the entry's arrays are not the ones described")
    arrays = []
    for index, spec in enumerate(specs):
        array = stored[f"a{index}"]
        if (array.dtype.str, list(array.shape), _digest(array)) != (spec["dtype"], spec["shape"], spec["sha256"]):
            raise EntryError(f"array {index} does not match its dtype, shape or checksum")
        array.setflags(write=False)
        arrays.append(array)
    return document, arrays


# The key: what a reference result depends on.


def _imported_modules(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The names of the modules of this package that a module's source imports (absolute or relative).

    A name imported from a stage's door (``autograder.run`` and the like) counts as its own module's; what
    a module imports only for type checking does not count."""
    found: set[str] = set()
    for node in _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                anchor = parts if is_package else parts[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(door_origin(base, alias.name) for alias in node.names)
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def _run_time_nodes(tree: ast.AST):
    """The nodes of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
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
    """A sha256 of the sources ``source_files`` finds for ``module`` (memoised for this process)."""
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
    """One call of a cached reference function: where its entry lives and under which key."""

    key: dict
    path: Path


# The decorator.


class CachedReference:
    """A deterministic reference function whose results are kept in this process and on disk."""

    def __init__(self, function: Callable):
        functools.update_wrapper(self, function)
        self.function = function
        self._memo: dict[tuple, Any] = {}
        self._lock = threading.RLock()

    def reference(self, *args: Any) -> Reference:
        """The key and the entry's path for this call."""
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
        """Whether a valid entry for this call is on disk."""
        ref = self.reference(*args)
        try:
            read_entry(ref.path, ref.key)
        except (FileNotFoundError, EntryError):
            return False
        return True

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
        try:
            return read_entry(ref.path, ref.key)
        except FileNotFoundError:
            pass
        except EntryError as exc:
            log.warning(
                "recomputing %s%s: its cache entry %s is not valid (%s)",
                self.function.__qualname__,
                args,
                ref.path,
                exc,
            )
        value = self.function(*args)
        description, arrays = encode(value)  # a TypeError here is the reference's own mistake: raised
        try:
            write_entry(ref.path, ref.key, value)
        except OSError as exc:
            log.warning("could not store %s%s in %s: %s", self.function.__qualname__, args, ref.path, exc)
        # Return what a later process will read: the same types (numpy, not JAX, arrays), read-only.
        return decode(description, [_read_only(a) for a in arrays])

    def cache_clear(self) -> None:
        """Forget the results memoised in this process (the disk entries stay)."""
        with self._lock:
            self._memo.clear()


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.array(array, copy=True)
    array.setflags(write=False)
    return array


def cached_reference(function: Callable) -> CachedReference:
    """Keep ``function``'s results in this process and on disk, for every later process on the machine.

    For deterministic reference functions only: never for measurements (timings). Arguments must be
    numbers, strings, bools, None or tuples of them; results nested tuples, lists or dicts of arrays and
    plain scalars. Arrays come back as read-only numpy arrays."""
    return CachedReference(function)
