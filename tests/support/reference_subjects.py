"""Cached reference functions for the cache's tests: each computation appends its name to the file
``$SUBJECT_LOG``, so a test sees what was computed and what was read back."""

import os

import numpy as np

from autograder.caches.reference_cache import cached_reference


def _log(name: str) -> None:
    with open(os.environ["SUBJECT_LOG"], "a", encoding="utf-8") as handle:
        handle.write(name + "\n")


@cached_reference
def table(rows: int, label: str = "t"):
    _log(f"table({rows})")
    return {
        "values": np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) / 7,
        "label": label,
        "ratio": 1 / 3,
        "ok": True,
        "none": None,
        "parts": (rows, [np.int16(rows)]),
    }


@cached_reference
def jax_result():
    import jax.numpy as jnp

    _log("jax_result()")
    return jnp.arange(4.0) * 0.1


@cached_reference
def unstorable():
    return {1, 2}


@cached_reference
def slow_table(rows: int):
    """A table that takes two seconds to compute: processes that ask for it at once overlap."""
    import time

    _log(f"slow_table({rows})")
    time.sleep(2)
    return np.arange(rows, dtype=np.float64) / 3
