"""A reference cache entry: one ``.npz`` of a value, its key and checksums, read without pickles. An entry
that is unreadable, truncated, edited, or made for another key is recomputed, never trusted nor an error."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from autograder.caches.machine_cache import make_private_dirs

FORMAT = 1
STRUCTURE_MEMBER = "structure"  # the JSON document, stored in the .npz as uint8 bytes


class EntryError(ValueError):
    """A cache entry that cannot be trusted."""


def encode(value: Any) -> tuple[Any, list[np.ndarray]]:
    """A JSON-able description of ``value`` and its arrays (read-only copies), in the order the description
    numbers them."""
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
            array = np.array(item, copy=True)
            if array.dtype.hasobject or array.dtype.fields is not None:
                raise TypeError(f"{where}: an array of dtype {array.dtype} cannot be cached (objects or fields)")
            array.setflags(write=False)
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
        if kind in ("array", "scalar") and type(body) is int and 0 <= body < len(arrays):  # not a bool
            return arrays[body][()] if kind == "scalar" else arrays[body]
        raise EntryError(f"unexpected item in the description: {str(item)[:80]}")

    return walk(description)


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(array.tobytes()).hexdigest()  # the bytes in C order, whatever the layout


def _document_digest(document: dict) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def write_entry(path: Path, key: dict, value: Any) -> None:
    """Store ``value`` for ``key`` at ``path`` atomically."""
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
    """The value stored at ``path`` for ``key``; EntryError when it is not exactly what ``write_entry`` wrote."""
    try:
        stored = np.load(path, allow_pickle=False)
        if not isinstance(stored, np.lib.npyio.NpzFile):
            raise EntryError("not an .npz entry")
        with stored:
            document, arrays = _checked_contents(stored, key)
    except (FileNotFoundError, EntryError):
        raise
    except Exception as exc:  # whatever a damaged file makes numpy raise: the entry is not trusted
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
