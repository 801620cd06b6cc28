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

from autograder.mutation.source_mutants import SourceMutant, cell_nodes
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


def text_mutants(source: str, answer: set[int], literals: list[str], operators=OPERATORS) -> list[SourceMutant]:
    """The cell's mutants from its task's literals, each distinct result once, in a stable order."""
    module, nodes, printed = cell_nodes(source)
    seen = {source}
    out = []
    for operator, description, line, replacements in _changes(nodes, printed, answer, *stated(literals)):
        if operator not in operators:
            continue
        changed = module.visit(Replace(replacements)).code
        if changed not in seen:
            seen.add(changed)
            out.append(SourceMutant(operator, description, line, changed))
    return out


def _changes(nodes, printed, answer, words, numbers, dtypes, names) -> Iterator[tuple[str, str, int, dict]]:
    # the first line of each node that lies wholly on answer lines, outside a printing call
    line = {id(node): lines.start for node, lines in nodes if id(node) not in printed and set(lines) <= answer}
    found = [node for node, _ in nodes if id(node) in line]
    # a bound name, or an attribute (``jax.shard_map``'s ``shard_map``), is no name of the notebook's
    bound = {id(n.target) for n, _ in nodes if isinstance(n, cst.AssignTarget)}
    bound |= {id(n.attr) for n, _ in nodes if isinstance(n, cst.Attribute)}
    named = [n for n in found if isinstance(n, cst.Name) and id(n) not in bound]
    called = {n.func.value for n, _ in nodes if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)}
    strings = [(n, str(ast.literal_eval(n.value))) for n in found if isinstance(n, cst.SimpleString)]
    for word in sorted(words):
        uses = [node for node, value in strings if value == word]
        if uses:
            renamed = {node: node.with_changes(value=repr(word + "_")) for node in uses}
            yield "text_word", f"the text's '{word}' renamed '{word}_' throughout", line[id(uses[0])], renamed
    for integer in (n for n in found if isinstance(n, cst.Integer)):
        value = int(integer.value)
        if value in numbers:
            for bigger in sorted({value + 1, value * 10} - {value}):
                yield (
                    "text_number",
                    f"the text's {value} → {bigger}",
                    line[id(integer)],
                    {integer: cst.Integer(str(bigger))},
                )
    typed = [(n.attr, line[id(n)]) for n in found if isinstance(n, cst.Attribute)]  # ``jnp.float32``
    for name, at in typed + [(n, line[id(n)]) for n in named]:
        if name.value in dtypes:
            dtype = DTYPES[name.value]
            yield "text_dtype", f"the text's {name.value} → {dtype}", at, {name: cst.Name(dtype)}
    used = {name.value for name in named}
    swapped: set[tuple[str, str]] = set()
    for name in named:
        if name.value not in names:
            continue
        for other in names:  # another of the text's names of the same kind (both called, or neither)
            alike = (name.value in called) == (other in called)
            if other != name.value and other in used and alike and (name.value, other) not in swapped:
                swapped.add((name.value, other))  # at its first use: one mutant a pair
                yield (
                    "text_name",
                    f"the text's `{name.value}` → `{other}` at one use",
                    line[id(name)],
                    {name: cst.Name(other)},
                )
                break
