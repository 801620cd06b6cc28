"""Value checks: a student's array (or number) against the values the grader computed itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes  # noqa: F401 -- registers bfloat16 and float8 names with numpy
import numpy as np

from autograder.checks.found import CheckFailure, leaf_name, plain_value, quote, require_defined, require_tree
from autograder.facts import Fact


def is_allclose(found: Any, expected: Any, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """True when ``assert_allclose`` would pass."""
    try:
        assert_allclose(found, expected, "value", rtol=rtol, atol=atol)
    except CheckFailure:
        return False
    return True


def assert_allclose(
    found: Fact | np.ndarray | Any, expected: Any, name: str, rtol: float = 1e-5, atol: float = 1e-6
) -> None:
    """Fail unless ``found`` has the expected shape, kind of dtype and values, in every device's block too."""
    expected = np.asarray(expected)
    _assert_close(_found_values(found, name), expected, name, rtol, atol)
    if not (isinstance(found, Fact) and found.blocks and found.sharding is not None):
        return
    for device in sorted(found.blocks):
        index = tuple(slice(start, stop) for start, stop in found.sharding.device_indices[device])
        try:
            _assert_close(_typed(found.blocks[device], found.dtype), expected[index], name, rtol, atol)
        except CheckFailure as failure:
            where = ", ".join(f"{start}:{stop}" for start, stop in found.sharding.device_indices[device])
            raise CheckFailure(
                f"{quote(name)}: the array reads right, but device {device} holds other values in its block"
                f" [{where}] — {str(failure).split(': ', 1)[-1]}. Its value is read from one copy of each block:"
                " a shard_map with check_vma=False and a replicated out_specs (P()) shows one device's block"
                " as the whole result, so every device must compute the same"
            ) from None


def _assert_close(values: np.ndarray, expected: np.ndarray, name: str, rtol: float, atol: float) -> None:
    if values.shape != expected.shape:
        hint = " — it looks transposed" if values.ndim > 1 and values.shape == expected.shape[::-1] else ""
        raise CheckFailure(f"{quote(name)}: expected shape {expected.shape}, found shape {values.shape}{hint}")
    if _kind(values.dtype) != _kind(expected.dtype):
        raise CheckFailure(
            f"{quote(name)}: expected {_kind(expected.dtype)} values ({expected.dtype}),"
            f" found {_kind(values.dtype)} values ({values.dtype})"
        )
    if np.array_equal(values, expected):  # the usual case of a re-laid-out array: no widened copies
        return
    wide = np.complex128 if _kind(expected.dtype) == "complex" else np.float64
    got, want = values.astype(wide), expected.astype(wide)
    close = _isclose(got, want, rtol, atol)
    if close.all():
        return
    transposed = got.ndim == 2 and got.shape[0] == got.shape[1] and np.allclose(got.T, want, rtol=rtol, atol=atol)
    raise CheckFailure(
        f"{quote(name)}: {_mismatch(got, want, close)} (tolerance rtol={rtol:g}, atol={atol:g})"
        + (" — the values are the transpose of the expected ones" if transposed else "")
    )


def assert_tree_allclose(
    found: Fact | None, expected: Sequence[Any], name: str, rtol: float = 1e-5, atol: float = 1e-6
) -> None:
    fact = require_tree(found, name, len(expected))
    for index, (leaf, want) in enumerate(zip(fact.leaves, expected)):
        assert_allclose(leaf, want, leaf_name(fact, name, index), rtol=rtol, atol=atol)


def _found_values(found: Any, name: str) -> np.ndarray:
    if not isinstance(found, Fact):
        return np.asarray(found)
    fact = require_defined(found, name)
    if fact.kind == "array" and fact.values is not None:
        return _typed(fact.values, fact.dtype)
    value = plain_value(fact, name)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.asarray(value)
    raise CheckFailure(f"{quote(name)}: expected an array, found {fact.describe()}")


def _typed(values: np.ndarray, dtype_name: str | None) -> np.ndarray:
    """Values whose dtype a .npy file could not name (bfloat16 loads as raw bytes), viewed as that dtype."""
    if values.dtype.kind != "V" or not dtype_name:
        return values
    try:
        dtype = np.dtype(dtype_name)
    except TypeError:
        return values
    return values.view(dtype) if dtype.itemsize == values.dtype.itemsize else values


def _kind(dtype: np.dtype) -> str:
    if dtype.kind == "c":
        return "complex"
    if dtype.kind == "f" or "float" in dtype.name:  # bfloat16 and float8 types have kind "V"
        return "floating-point"
    return {"i": "integer", "u": "integer", "b": "boolean"}.get(dtype.kind, dtype.name)


def _isclose(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """``np.isclose(got, want, rtol, atol, equal_nan=True)`` in a fifth of its time: the grader compares lab 1's
    1024×1024 product while the kernel runs."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(got - want) <= atol + rtol * np.abs(want)
    close &= np.isfinite(got)
    close &= np.isfinite(want)
    close |= got == want  # equal infinities
    close |= np.isnan(got) & np.isnan(want)
    return close


def _mismatch(got: np.ndarray, want: np.ndarray, close: np.ndarray) -> str:
    bad = ~close
    diff = np.abs(got - want)
    finite = np.isfinite(diff) & bad
    worst = f"{diff[finite].max():.6g}" if finite.any() else "nan"
    if got.ndim == 0:
        return f"expected {_number(want)}, found {_number(got)} (abs difference {worst})"
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    nan_note = f"; {int(np.isnan(got).sum())} found values are NaN" if np.isnan(got).any() else ""
    return (
        f"{int(bad.sum())} of {got.size} values differ from the expected (max abs difference {worst}{nan_note});"
        f" first at index {index}: expected {_number(want[index])}, found {_number(got[index])}"
    )


def _number(value) -> str:
    return f"{value:.6g}" if np.isrealobj(value) else f"{complex(value):.6g}"
