"""Right variants: the solution's answers rewritten in ways a task's text allows, each of which must keep
its task's full marks. Mutants show a grader too lenient; variants show it too strict, checking the
solution's spelling rather than the lesson."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper

from autograder.mutation.source_mutants import Nodes, SourceMutant
from autograder.mutation.syntax import JIT, TIGHT, Replace, dotted

KEPT, LOST = "kept", "lost"  # a variant's verdicts


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
    module = cst.parse_module(source)
    visitor = Nodes()
    MetadataWrapper(module, unsafe_skip_copy=True).visit(visitor)
    out = []
    for kind in kinds:
        targets: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel] = {}
        said, first = "", 0
        for node, lines in visitor.found:
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
