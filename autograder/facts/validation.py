"""The field tests every reader of the kernel's files shares: a file the kernel wrote is untrusted, so each
field is tested for its type and size before it becomes a record, and a failed test raises ``FactsError``."""

from __future__ import annotations

import math
from typing import Any

from autograder.facts.schema import FactsError

MAX_TEXT = 4 * 1024 * 1024


def is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def require(condition: object, message: str) -> None:
    if not condition:
        raise FactsError(message)


def text(value: Any, limit: int = MAX_TEXT) -> str | None:
    if value is None:
        return None
    require(isinstance(value, str), f"expected text, found {type(value).__name__}")
    return value[:limit]


def is_texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
