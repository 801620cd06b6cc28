"""The exception every check raises, and the student's value read out of a ``Fact``, failing clearly when it
is absent or of the wrong kind."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from autograder.facts import Fact


class CheckFailure(AssertionError):
    """A check failed: ``str()`` is the message for the student; layout checks also attach both pictures."""

    def __init__(self, message: str, expected_picture: str | None = None, found_picture: str | None = None):
        super().__init__(message)
        self.message = message
        self.expected_picture = expected_picture
        self.found_picture = found_picture


def quote(name: str) -> str:
    """How a student's name appears in messages: in backticks (a name already quoted is kept)."""
    return name if "`" in name else f"`{name}`"


def listed(texts: Iterable[str]) -> str:
    """Texts as a message lists them: "a", "a and b", "a, b and c"."""
    items = list(texts)
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def leaf_name(tree: Fact, name: str, index: int) -> str:
    """ "`params[1]['W']`" from the leaf's key path, else "`params` leaf 3"."""
    if index < len(tree.paths) and tree.paths[index]:
        return quote(f"{name}{tree.paths[index]}")
    return f"{quote(name)} leaf {index}"


def require_defined(found: Fact | None, name: str) -> Fact:
    if found is None or found.is_missing:
        raise CheckFailure(f"{quote(name)} is not defined after this task")
    return found


def require_tree(found: Fact | None, name: str, count: int | None = None) -> Fact:
    """A tree fact of ``count`` leaves (any number where None)."""
    fact = require_defined(found, name)
    if fact.kind != "tree":
        raise CheckFailure(f"{quote(name)}: expected a list, tuple or dict of arrays, found {fact.describe()}")
    if count is not None and count != len(fact.leaves):
        raise CheckFailure(f"{quote(name)}: expected {count} arrays, found {len(fact.leaves)}")
    return fact


def require_array(found: Fact | None, name: str) -> Fact:
    fact = require_defined(found, name)
    if fact.kind != "array":
        raise CheckFailure(f"{quote(name)}: expected an array, found {fact.describe()}")
    return fact


# What a student's value is, in a message, where "a <type>" does not say it (``Fact.type`` names the type).
TYPE_WORDS = {
    "float": "a Python float",
    "int": "an int",
    "bool": "a Python bool (True or False)",
    "numpy.ndarray": "a numpy array",
}
# A subclass is the type it extends: numpy.float64 is a Python float (isinstance says so), numpy.bool is not a bool.
SUBCLASSES = {"float": ("numpy.float64",)}
# How to turn what was found into what is asked, where one call does it.
CONVERSIONS = {"float": "float(...)", "bool": "bool(...)", "int": "int(...)", "str": "str(e)", "tuple": "tuple(...)"}


def exact_type(found: Any) -> str:
    """The exact type of a fact or a plain value, as the kernel recorder names it (``numpy.bool``)."""
    if isinstance(found, Fact):
        return found.type or found.kind
    kind = type(found)
    if kind.__module__ == "builtins":
        return kind.__name__
    if "jax" in kind.__module__ and hasattr(found, "sharding"):
        return "jax.Array"
    return f"{kind.__module__.split('.')[0]}.{kind.__name__}"


def assert_value_type(found: Any, accept: str | Sequence[str], name: str) -> None:
    """Fail unless ``found`` is exactly of a type ``accept`` names: a 0-d array is not the float a task asks for."""
    accept = (accept,) if isinstance(accept, str) else tuple(accept)
    if isinstance(found, Fact):
        require_defined(found, name)
    found_type = exact_type(found)
    if any(found_type == want or found_type in SUBCLASSES.get(want, ()) for want in accept):
        return
    wanted = " or ".join(TYPE_WORDS.get(want, f"a {want}") for want in accept)
    shown = found.describe() if isinstance(found, Fact) else f"{found!r}"
    if isinstance(found, Fact) and found.kind == "value":
        shown = repr(found.value)
    elif isinstance(found, Fact) and found.kind == "array":
        shown = f"{found.dtype}[{','.join(map(str, found.shape or ()))}]"
    elif isinstance(found, Fact) and found.kind == "spec":
        shown = "of spec P(" + ", ".join(map(entry_text, found.spec or ())) + ")"
    elif isinstance(found, Fact) and found.kind == "tree":
        shown = f"of {len(found.leaves)} items"
    conversion = CONVERSIONS.get(accept[0]) if len(accept) == 1 else None
    hint = f" — write {conversion}" if conversion else ""
    if found_type == "NamedSharding" and "PartitionSpec" in accept:
        hint = " — a NamedSharding pairs a mesh with a spec: the spec alone is asked (its .spec)"
    raise CheckFailure(f"{quote(name)}: expected {wanted}, found a {found_type} {shown}{hint}")


def entry_text(entry: tuple[str, ...] | None) -> str:
    """A PartitionSpec's entry as a message reads it: ``None``, ``'x'``, ``('a', 'b')``."""
    if entry is None:
        return "None"
    return repr(entry[0]) if len(entry) == 1 else repr(tuple(entry))


def found_number(found: Any, name: str, accept: Sequence[str] = ("float",)) -> float:
    """A finite positive number of an exact type ``accept`` names, from a fact or a plain value."""
    value = plain_value(found, name)
    if isinstance(value, Fact) or isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CheckFailure(f"{quote(name)}: expected a number of seconds or a ratio, found {_describe(value)}")
    assert_value_type(found, accept, name)
    if not math.isfinite(value) or value <= 0:
        raise CheckFailure(f"{quote(name)}: expected a finite positive number, found {value!r}")
    return float(value)


def found_bool(found: Any, name: str, accept: Sequence[str] = ("bool",)) -> bool:
    """A bool from a value fact or a plain bool, of one of the exact types ``accept`` names."""
    value = plain_value(found, name)
    if not isinstance(value, (bool, np.bool_)):
        raise CheckFailure(f"{quote(name)}: expected True or False, found {_describe(value)}")
    assert_value_type(found, accept, name)
    return bool(value)


def plain_value(found: Any, name: str) -> Any:
    """The student's plain value: a number, bool or text from a fact or a numpy scalar; any other fact as is."""
    if not isinstance(found, Fact):
        if isinstance(found, np.generic) or (getattr(found, "shape", None) == () and hasattr(found, "item")):
            return found.item()
        return found
    fact = require_defined(found, name)
    if fact.kind == "value":
        if fact.type == "float" and isinstance(fact.value, str):
            with contextlib.suppress(ValueError):
                return float(fact.value)  # the kernel recorder writes nan and inf as text
        return fact.value
    if fact.kind == "array" and fact.shape == () and fact.values is not None:
        return fact.values.item()
    return fact


def _describe(value: Any) -> str:
    if isinstance(value, Fact):
        return value.describe()
    return f"{type(value).__name__} {value!r}"


def found_tuple(found: Any, name: str, of: type = int) -> tuple:
    """A tuple of ``of`` values (no bools for ints): where a task asks for a tuple, a list is another answer."""
    element = of.__name__
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
        hint = f" — a list is not a tuple: write {tuple(items)!r}" if kind == "list" else ""
        raise CheckFailure(f"{quote(name)}: expected a tuple of {element}s, found a {kind} {items!r}{hint}")
    if not all(isinstance(item, of) and not (of is int and isinstance(item, bool)) for item in items):
        kinds = ", ".join(type(item).__name__ for item in items)
        raise CheckFailure(f"{quote(name)}: expected a tuple of {element}s, found a tuple of {kinds}: {tuple(items)!r}")
    return tuple(items)
