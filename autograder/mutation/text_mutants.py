"""Mutants written from a task's text: each literal the text names (its code spans), changed where the
answer uses it. A stated literal is a clause of its own, which a grader of the lesson's shape alone lets
pass; each mutant names the literal it changed, so that a survivor says which clause no check holds.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from collections.abc import Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from autograder.mutation.source_mutants import Printed, SourceMutant
from autograder.mutation.syntax import Replace

DTYPES = {"float32": "float16", "float16": "float32", "bfloat16": "float32", "int32": "int16", "float64": "float32"}
OPERATORS = ("text_word", "text_number", "text_dtype", "text_name")

_QUOTED = re.compile(r"""'([^'\s]+)'|"([^"\s]+)\"""")
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def stated(literals: list[str]) -> tuple[set[str], set[int], set[str], list[str]]:
    """What the literals state: quoted words, numbers, dtypes, and the names a literal is (``big_lhs``) or
    calls a function on (``collective_matmul(big_lhs, big_rhs)``)."""
    words = {a or b for literal in literals for a, b in _QUOTED.findall(literal)}
    numbers = {int(n) for literal in literals for n in _NUMBER.findall(literal)}
    dtypes = {name for literal in literals for name in _IDENTIFIER.findall(literal) if name in DTYPES}
    names: list[str] = []
    for literal in literals:
        call = re.fullmatch(r"[A-Za-z_][\w.]*\((.*)\)", literal)
        candidates = [a.strip() for a in call.group(1).split(",")] if call else [literal]
        names += [c for c in candidates if _IDENTIFIER.fullmatch(c)]
    names = [n for n in names if n not in DTYPES and not keyword.iskeyword(n) and n not in dir(builtins)]
    return words, numbers, dtypes, list(dict.fromkeys(names))


class _Found(cst.CSTVisitor):
    """The nodes on the answer lines that use a stated literal."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, answer: set[int], printed: set[int]) -> None:
        super().__init__()
        self.answer = answer
        self.printed = printed
        self.strings: list[tuple[cst.SimpleString, str, int]] = []
        self.integers: list[tuple[cst.Integer, int, int]] = []
        self.names: list[tuple[cst.Name, int]] = []
        self.dtypes: list[tuple[cst.Name, int]] = []
        self.called: set[str] = set()  # names the cell calls: functions, not values
        self._targets: set[int] = set()

    def _line(self, node: cst.CSTNode) -> int | None:
        """The node's first line, where it lies wholly on answer lines and outside a printing call."""
        if id(node) in self.printed:
            return None
        position = self.get_metadata(PositionProvider, node)
        lines = range(position.start.line, position.end.line + 1)
        return position.start.line if all(line in self.answer for line in lines) else None

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self._targets.add(id(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.called.add(node.func.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._targets.add(id(node.attr))  # ``jax.shard_map``'s ``shard_map`` is no name of the notebook's
        line = self._line(node)
        if line is not None and node.attr.value in DTYPES:  # ``jnp.float32``
            self.dtypes.append((node.attr, line))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        line = self._line(node)
        if line is not None:
            self.strings.append((node, str(ast.literal_eval(node.value)), line))

    def visit_Integer(self, node: cst.Integer) -> None:
        line = self._line(node)
        if line is not None:
            self.integers.append((node, int(node.value), line))

    def visit_Name(self, node: cst.Name) -> None:
        line = self._line(node)
        if line is not None and id(node) not in self._targets:
            self.names.append((node, line))


def text_mutants(source: str, answer: set[int], literals: list[str], operators=OPERATORS) -> list[SourceMutant]:
    """The cell's mutants from its task's literals, each distinct result once, in a stable order."""
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    printed = Printed()
    module.visit(printed)
    found = _Found(answer, printed.found)
    wrapper.visit(found)
    words, numbers, dtypes, names = stated(literals)
    seen = {source}
    out = []
    for operator, description, line, replacements in _changes(found, words, numbers, dtypes, names):
        if operator not in operators:
            continue
        changed = module.visit(Replace(replacements)).code
        if changed not in seen:
            seen.add(changed)
            out.append(SourceMutant(operator, description, line, changed))
    return out


def _changes(found: _Found, words, numbers, dtypes, names) -> Iterator[tuple[str, str, int, dict]]:
    for word in sorted(words):
        uses = [(node, line) for node, value, line in found.strings if value == word]
        if uses:
            renamed = {node: node.with_changes(value=repr(word + "_")) for node, _ in uses}
            yield "text_word", f"the text's '{word}' renamed '{word}_' throughout", uses[0][1], renamed
    for integer, value, line in found.integers:
        if value in numbers:
            for bigger in sorted({value + 1, value * 10} - {value}):
                yield "text_number", f"the text's {value} → {bigger}", line, {integer: cst.Integer(str(bigger))}
    for name, line in found.dtypes + [(n, line) for n, line in found.names if n.value in DTYPES]:
        if name.value in dtypes:
            dtype = DTYPES[name.value]
            yield "text_dtype", f"the text's {name.value} → {dtype}", line, {name: cst.Name(dtype)}
    used = {name.value for name, _ in found.names}
    swapped: set[tuple[str, str]] = set()
    for name, line in found.names:
        if name.value not in names:
            continue
        for other in names:  # another of the text's names of the same kind (both called, or neither)
            alike = (name.value in found.called) == (other in found.called)
            if other != name.value and other in used and alike and (name.value, other) not in swapped:
                swapped.add((name.value, other))  # at its first use: one mutant a pair
                yield (
                    "text_name",
                    f"the text's `{name.value}` → `{other}` at one use",
                    line,
                    {name: cst.Name(other)},
                )
                break
