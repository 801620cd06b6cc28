"""A cell's mutants: every operator tried on every node that lies wholly on the cell's answer lines; libcst
keeps the source's formatting, so that a mutant's diff is its change alone. And its right variants: the
answer rewritten in ways a task's text allows, each of which must keep its task's full marks (mutants show
a grader too lenient; variants show it too strict, checking the solution's spelling rather than the lesson).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from autograder.mutation.operators import OPERATORS
from autograder.mutation.syntax import JIT, PRINTING, SPEC, TIGHT, Replace, Site, dotted, spec_axes

TIMERS = ("perf_counter", "time.time(", "timeit")
KEPT, LOST = "kept", "lost"  # a variant's verdicts


@dataclass(frozen=True)
class SourceMutant:
    """One change of a cell: the operator that made it, what it did (in words), where, and the new source."""

    operator: str
    description: str
    line: int
    source: str


def cell_nodes(source: str) -> tuple[cst.Module, list[tuple[cst.CSTNode, range]], frozenset[int]]:
    """A cell's tree; its every node, in the source's order, with its lines; and the ids of the nodes inside a
    printing call (``print``, ``display``...): what is only printed shows nowhere a grader looks. Raises
    ``libcst.ParserSyntaxError`` for a source that does not parse."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    positions = wrapper.resolve(PositionProvider)
    nodes = [(node, range(positions[node].start.line, positions[node].end.line + 1)) for node in _tree(wrapper.module)]
    printed = frozenset(
        id(inner)
        for node, _ in nodes
        if isinstance(node, cst.Call) and dotted(node.func) in PRINTING
        for inner in _tree(node)
        if inner is not node
    )
    return wrapper.module, nodes, printed


def _tree(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node below it, in the source's order."""
    yield node
    for child in node.children:
        yield from _tree(child)


def _axis_names(nodes) -> tuple[str, ...]:
    """The axis names the source's PartitionSpecs use, in order of first use."""
    return tuple(
        dict.fromkeys(
            axis
            for node, _ in nodes
            if isinstance(node, cst.Call) and dotted(node.func) in SPEC
            for axis in spec_axes(node.args)
        )
    )


def mutate(source: str, answer_lines: set[int], operators=tuple(OPERATORS)) -> list[SourceMutant]:
    """The mutants of ``source`` on ``answer_lines`` (1-based), distinct, in a fixed order."""
    module, nodes, printed = cell_nodes(source)
    lines_of = {id(node): lines for node, lines in nodes}
    site = Site(module, _axis_names(nodes), any(timer in source for timer in TIMERS), printed)
    seen, mutants = {source}, []
    for name in operators:
        for node, lines in nodes:
            for edit, description in OPERATORS[name](node, site):
                touched = [lines_of.get(id(n), lines) for n in edit]
                if not all(set(t) <= answer_lines for t in touched):
                    continue
                new = module.visit(Replace(edit)).code
                if new not in seen:
                    seen.add(new)
                    mutants.append(SourceMutant(name, description, min(t.start for t in touched), new))
    return mutants


def answer_lines(source: str) -> set[int]:
    """The lines (1-based) a student writes: within the solution markers, or ending with ``# SOLUTION``."""
    lines, inside = set(), False
    for number, line in enumerate(source.split("\n"), start=1):
        stripped = line.strip()
        if stripped.startswith("# BEGIN SOLUTION"):
            inside = True
        elif stripped.startswith("# END SOLUTION"):
            inside = False
        elif inside or line.rstrip().endswith("# SOLUTION"):
            lines.add(number)
    return lines


def _jit_call(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel, str]]:
    if isinstance(node, cst.FunctionDef):
        plain = [d for d in node.decorators if dotted(d.decorator) in JIT]
        if len(plain) == 1 and len(node.decorators) == 1:
            name = node.name.value
            wrapped = cst.parse_statement(f"{name} = {dotted(plain[0].decorator)}({name})\n")
            unwrapped = cst.FlattenSentinel([node.with_changes(decorators=()), wrapped])
            yield node, unwrapped, f"`@jax.jit` on `{name}` as a call"


def _device_order(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode, str]]:
    if isinstance(node, cst.Call) and dotted(node.func) in ("jax.make_mesh", "make_mesh") and node.args:
        shape = node.args[0].value
        one_axis = isinstance(shape, cst.Tuple) and len(shape.elements) == 1
        if one_axis and not any(a.keyword and a.keyword.value == "devices" for a in node.args):
            devices = cst.Arg(cst.parse_expression("jax.devices()[::-1]"), keyword=cst.Name("devices"), equal=TIGHT)
            yield (
                node,
                node.with_changes(args=[*node.args, devices]),
                "the 1-D mesh over the devices in the other order",
            )


def _matmul(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode, str]]:
    if isinstance(node, cst.Call) and dotted(node.func) in ("jnp.dot", "jnp.matmul") and len(node.args) == 2:
        a, b = (arg.value for arg in node.args)
        if not any(arg.keyword for arg in node.args):
            product = cst.BinaryOperation(a, cst.MatrixMultiply(), b, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            yield node, product, f"`{dotted(node.func)}` as `@`"


def _wait(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode, str]]:
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "block_until_ready"
        and not node.args
        and dotted(node.func.value) != "jax"
    ):
        call = cst.Call(cst.parse_expression("jax.block_until_ready"), [cst.Arg(node.func.value)])
        yield node, call, "`.block_until_ready()` as `jax.block_until_ready(...)`"


def _clock(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode, str]]:
    if isinstance(node, cst.Call) and dotted(node.func) == "time.perf_counter" and not node.args:
        yield node, cst.parse_expression("time.monotonic()"), "`time.perf_counter()` as `time.monotonic()`"


VARIANTS: dict[str, Callable[[cst.CSTNode], Iterator[tuple]]] = {
    "variant_jit_call": _jit_call,
    "variant_device_order": _device_order,
    "variant_matmul": _matmul,
    "variant_wait": _wait,
    "variant_clock": _clock,
}


def right_variants(source: str, answer: set[int], kinds=tuple(VARIANTS)) -> list[SourceMutant]:
    """The cell's variants: each kind applied to every node of it on the answer lines at once (a student
    who writes one way writes it throughout), one variant per kind that changes anything."""
    module, nodes, _ = cell_nodes(source)
    out = []
    for kind in kinds:
        targets: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel] = {}
        said, first = "", 0
        for node, lines in nodes:
            if not set(lines) <= answer:
                continue
            for original, replacement, description in VARIANTS[kind](node):
                targets[original] = replacement
                said, first = said or description, first or lines.start
        if targets:
            changed = module.visit(Replace(targets)).code
            if changed != source:
                out.append(SourceMutant(kind, f"right variant: {said}", first, changed))
    return out
