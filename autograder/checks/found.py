"""Reading the student's value out of a ``Fact``, failing clearly when it is absent or of the wrong kind."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from autograder.checks.failure import CheckFailure
from autograder.facts import Fact


def quote(name: str) -> str:
    """How a student's name appears in messages: in backticks (a name already quoted is kept)."""
    return name if "`" in name else f"`{name}`"


def leaf_name(tree: Fact, name: str, index: int) -> str:
    """The name of one leaf of a tree fact: "`params[1]['W']`" from its key path, else "`params` leaf 3"."""
    if index < len(tree.paths) and tree.paths[index]:
        return quote(f"{name}{tree.paths[index]}")
    return f"{quote(name)} leaf {index}"


def require_defined(found: Fact | None, name: str) -> Fact:
    """``found`` itself, or a CheckFailure saying the name was not bound by this task."""
    if found is None or found.is_missing:
        raise CheckFailure(f"{quote(name)} is not defined after this task")
    return found


def require_array(found: Fact | None, name: str) -> Fact:
    """An array fact, or a CheckFailure naming what was found instead."""
    fact = require_defined(found, name)
    if fact.kind != "array":
        raise CheckFailure(f"{quote(name)}: expected an array, found {fact.describe()}")
    return fact


def found_number(found: Any, name: str) -> float:
    """A finite positive number from a value fact, a 0-d array fact or a plain number."""
    value = _plain_value(found, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CheckFailure(f"{quote(name)}: expected a number of seconds or a ratio, found {_describe(found, value)}")
    if not math.isfinite(value) or value <= 0:
        raise CheckFailure(f"{quote(name)}: expected a finite positive number, found {value!r}")
    return float(value)


def found_bool(found: Any, name: str) -> bool:
    """A bool from a value fact or a plain bool (numpy bools included)."""
    value = _plain_value(found, name)
    if not isinstance(value, (bool, np.bool_)):
        raise CheckFailure(f"{quote(name)}: expected True or False, found {_describe(found, value)}")
    return bool(value)


def _plain_value(found: Any, name: str) -> Any:
    if not isinstance(found, Fact):
        return found.item() if isinstance(found, np.generic) else found
    fact = require_defined(found, name)
    if fact.kind == "value":
        if fact.type == "float" and isinstance(fact.value, str):
            return _float_text(fact.value)  # the probe records nan and inf as text
        return fact.value
    if fact.kind == "array" and fact.shape == () and fact.values is not None:
        return fact.values.item()
    return fact


def _describe(found: Any, value: Any) -> str:
    if isinstance(value, Fact):
        return value.describe()
    return f"{type(value).__name__} {value!r}"


def _float_text(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


PYTHON_TYPE_NAMES = {int: "int", float: "float", bool: "bool", str: "str"}


def found_tuple(found: Any, name: str, of: type = int) -> tuple:
    """A tuple of ``of`` values (ints by default, never bools for ints) from a tuple fact: a list, a number
    or a tuple of something else fails, naming what was found — where a task asks for a tuple, a list is
    another answer."""
    element = PYTHON_TYPE_NAMES.get(of, of.__name__)
    if not isinstance(found, Fact):
        items, kind = found, type(found).__name__
    else:
        fact = require_defined(found, name)
        if fact.kind == "tree" and fact.type in ("tuple", "list") and all(leaf.kind == "value" for leaf in fact.leaves):
            items, kind = [leaf.value for leaf in fact.leaves], fact.type
        elif fact.kind == "value":
            items, kind = fact.value, fact.type
        else:
            raise CheckFailure(f"{quote(name)}: expected a tuple of {element}s, found {fact.describe()}")
    if kind != "tuple":
        shown = f"{kind} {list(items)!r}" if kind == "list" else f"{kind} {items!r}"
        hint = f" — a list is not a tuple: write {tuple(items)!r}" if kind == "list" else ""
        raise CheckFailure(f"{quote(name)}: expected a tuple of {element}s, found a {shown}{hint}")
    if not all(isinstance(item, of) and not (of is int and isinstance(item, bool)) for item in items):
        kinds = ", ".join(type(item).__name__ for item in items)
        raise CheckFailure(f"{quote(name)}: expected a tuple of {element}s, found a tuple of {kinds}: {tuple(items)!r}")
    return tuple(items)
