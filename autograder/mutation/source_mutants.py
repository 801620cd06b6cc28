"""A cell's mutants: every operator tried on every node that lies wholly on the cell's answer lines.
libcst keeps the source's formatting, so that a mutant's diff is its change alone."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from autograder.mutation.operators import OPERATORS
from autograder.mutation.syntax import PRINTING, SPEC, Replace, Site, dotted, spec_axes

TIMERS = ("perf_counter", "time.time(", "timeit")


@dataclass(frozen=True)
class SourceMutant:
    """One change of a cell: the operator that made it, what it did (in words), where, and the new source."""

    operator: str
    description: str
    line: int
    source: str


class _Printed(cst.CSTVisitor):
    """The ids of the nodes inside the arguments of a printing call (``print``, ``display``...)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: set[int] = set()
        self._depth = 0

    def visit_Call(self, node: cst.Call) -> bool:
        if self._depth:
            self.found.add(id(node))
        if dotted(node.func) in PRINTING:
            self._depth += 1
        return True

    def leave_Call(self, original_node: cst.Call) -> None:
        if dotted(original_node.func) in PRINTING:
            self._depth -= 1


class Nodes(cst.CSTVisitor):
    """Every node, in the source's order, with its lines."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[cst.CSTNode, range]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        position = self.get_metadata(PositionProvider, node)
        self.found.append((node, range(position.start.line, position.end.line + 1)))
        return True


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
    """The mutants of ``source`` on ``answer_lines`` (1-based), distinct, in a fixed order; raises
    ``libcst.ParserSyntaxError`` for a source that does not parse."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    visitor = Nodes()
    wrapper.visit(visitor)
    module = wrapper.module
    lines_of = {id(node): lines for node, lines in visitor.found}
    printing = _Printed()
    module.visit(printing)
    site = Site(module, _axis_names(visitor.found), any(timer in source for timer in TIMERS), frozenset(printing.found))
    seen, mutants = {source}, []
    for name in operators:
        for node, lines in visitor.found:
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
