"""The mutation operators: each a small change a student makes in these labs, proposed for one node as
edits of the syntax tree (which nodes it sees, and which edits count, is source_mutants.py's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst
from libcst import matchers

from autograder.mutation.syntax import (
    FLIPPED,
    JIT,
    PRINTING,
    SPEC,
    TIGHT,
    Edit,
    Site,
    assigned_name,
    config_update,
    dotted,
    keyword_arg,
    name_argument,
    parenthesized,
    positional_args,
    spec_axes,
    swap_values,
    with_args,
)

REDUCTIONS = ("psum", "psum_scatter", "pmean")
SCATTER_ONLY = {"scatter_dimension", "tiled"}  # keywords psum and pmean do not take
COLLECTING = {"append", "extend", "update", "add", "insert"}  # a method call that keeps a result, not a warm-up
OPPOSITES = (
    (cst.GreaterThan, cst.LessThanEqual),
    (cst.LessThan, cst.GreaterThanEqual),
    (cst.Equal, cst.NotEqual),
    (cst.In, cst.NotIn),
    (cst.Is, cst.IsNot),
)
NEGATED = dict(OPPOSITES) | {b: a for a, b in OPPOSITES}  # each comparison's negation, both ways


def drop_jit(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """``jax.jit(f, ...)`` becomes ``f``; an ``@jax.jit`` decorator goes."""
    if isinstance(node, cst.Call) and dotted(node.func) in JIT and positional_args(node):
        yield {node: positional_args(node)[0].value}, f"`{site.code(node.func)}` dropped: the function is not jitted"
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        for decorator in node.decorators:
            target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if dotted(target) in JIT:
                kept = [d for d in node.decorators if d is not decorator]
                yield {node: node.with_changes(decorators=kept)}, f"`@{site.code(decorator.decorator)}` dropped"


def partition_spec(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """A ``PartitionSpec``'s entries swapped, one dropped or replaced, or a tuple entry's axes swapped."""
    if not (isinstance(node, cst.Call) and dotted(node.func) in SPEC) or any(a.keyword or a.star for a in node.args):
        return
    args, spec = list(node.args), site.code(node)

    def entry(i: int, value: cst.BaseExpression) -> Edit:
        return {node: with_args(node, args[:i] + [args[i].with_changes(value=value)] + args[i + 1 :])}

    for i in range(len(args) - 1):
        if site.code(args[i].value) != site.code(args[i + 1].value):
            yield {node: with_args(node, swap_values(args, i, i + 1))}, f"`{spec}`: entries {i} and {i + 1} swapped"
    for i, value in enumerate(arg.value for arg in args):
        is_none = isinstance(value, cst.Name) and value.value == "None"
        if not is_none:
            yield {node: with_args(node, args[:i] + args[i + 1 :])}, f"`{spec}`: entry {i} dropped"
        if isinstance(value, cst.SimpleString):
            yield entry(i, cst.Name("None")), f"`{spec}`: entry {i} replaced by None"
        elif is_none:
            present = set(spec_axes(args))
            for axis in (a for a in site.axis_names if a not in present):
                yield entry(i, cst.SimpleString(repr(axis))), f"`{spec}`: entry {i} replaced by {axis!r}"
        elif isinstance(value, cst.Tuple) and len(value.elements) >= 2:
            swapped = value.with_changes(elements=swap_values(list(value.elements), 0, 1))
            yield entry(i, swapped), f"`{spec}`: the axes of entry {i} swapped"


VARYING_CASTS = ("jax.lax.pvary", "lax.pvary", "jax.lax.pcast", "lax.pcast")


def check_vma(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """``check_vma`` flipped; ``jax.lax.pvary(x, axes)`` or ``jax.lax.pcast(x, axes, ...)`` become ``x``."""
    if isinstance(node, cst.Call):
        arg = keyword_arg(node, "check_vma")
        if arg is not None and isinstance(arg.value, cst.Name) and arg.value.value in FLIPPED:
            flipped = FLIPPED[arg.value.value]
            yield {arg.value: cst.Name(flipped)}, f"`check_vma={arg.value.value}` became `check_vma={flipped}`"
        name = dotted(node.func)
        positional = positional_args(node)
        if name in VARYING_CASTS and positional:
            yield {node: positional[0].value}, f"`{site.code(node)}` became its operand: `{name}` dropped"


def collective(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """A reduction replaced by a cousin, ``all_gather``'s ``tiled`` flipped, a ``ppermute``'s pairs changed."""
    if not isinstance(node, cst.Call):
        return
    name = dotted(node.func) or ""
    last = name.rpartition(".")[2]
    if last in REDUCTIONS:
        for other in (r for r in REDUCTIONS if r != last):
            func = cst.parse_expression(name[: len(name) - len(last)] + other)
            args = [
                a
                for a in node.args
                if other == "psum_scatter" or a.keyword is None or a.keyword.value not in SCATTER_ONLY
            ]
            yield {node: with_args(node.with_changes(func=func), args)}, f"`{last}` became `{other}`"
    elif last == "all_gather":
        tiled = keyword_arg(node, "tiled")
        if tiled is None:
            added = cst.Arg(cst.Name("True"), keyword=cst.Name("tiled"), equal=TIGHT)
            yield {node: with_args(node, list(node.args) + [added])}, "`all_gather` given `tiled=True`"
        elif isinstance(tiled.value, cst.Name) and tiled.value.value in FLIPPED:
            flipped = FLIPPED[tiled.value.value]
            yield {tiled.value: cst.Name(flipped)}, f"`all_gather`'s `tiled={tiled.value.value}` became {flipped}"
    elif last == "ppermute":
        perm = keyword_arg(node, "perm") or (positional_args(node)[2] if len(positional_args(node)) > 2 else None)
        if perm is not None:
            code = parenthesized(site, perm.value)
            for words, text in (
                ("reversed", f"[(j, i) for i, j in {code}]"),
                ("shifted by one device", f"[(i, (j + 1) % len({code})) for i, j in {code}]"),
            ):
                yield {perm.value: cst.parse_expression(text)}, f"`ppermute`'s pairs {words}"


def off_by_one(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """A ``range``'s end, or an integer index, one more or one less."""
    if (
        isinstance(node, cst.Call)
        and dotted(node.func) == "range"
        and 1 <= len(node.args) <= 3
        and all(a.keyword is None and not a.star for a in node.args)
    ):
        end = node.args[0] if len(node.args) == 1 else node.args[1]
        for sign in ("-", "+"):
            new = cst.parse_expression(f"{parenthesized(site, end.value)} {sign} 1")
            yield {end.value: new}, f"`{site.code(node)}`: its end {sign} 1"
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = node.slice[0].slice.value
        if isinstance(index, cst.Integer):
            value = index.evaluated_value
            for other in (value + 1, value - 1) if value > 0 else (value + 1,):
                yield {index: cst.Integer(str(other))}, f"`{site.code(node)}`: index {value} became {other}"


def swap(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """Two bound names, two name arguments of a call, or a ratio's operands swapped."""
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Tuple):
        target = node.targets[0].target
        for i in range(len(target.elements) - 1):
            a, b = target.elements[i], target.elements[i + 1]
            if site.code(a.value) != site.code(b.value):
                yield (
                    {target: target.with_changes(elements=swap_values(list(target.elements), i, i + 1))},
                    f"the names `{site.code(a.value)}` and `{site.code(b.value)}` bound in each other's place",
                )
    if isinstance(node, (cst.Module, cst.IndentedBlock)):
        names = [assigned_name(statement) for statement in node.body]
        for first, second in zip(names, names[1:]):
            if first and second and first.value != second.value:
                yield (
                    {first: second, second: first},
                    f"`{first.value}` and `{second.value}` bound in each other's place",
                )
    if isinstance(node, cst.Call) and dotted(node.func) not in SPEC:
        args = list(node.args)
        for i in range(len(args) - 1):
            first, second = name_argument(args[i]), name_argument(args[i + 1])
            if first is not None and second is not None and first.value != second.value:
                yield (
                    {node: node.with_changes(args=swap_values(args, i, i + 1))},
                    f"`{site.code(node.func)}`'s arguments `{first.value}` and `{second.value}` swapped",
                )
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.FloorDivide)):
        yield (
            {node: node.with_changes(left=node.right, right=node.left)},
            f"`{site.code(node)}`: numerator and denominator swapped",
        )


def timing(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """In code that times: a warm-up call left out, or a result no longer waited for."""
    if not site.times:
        return
    if _warm_up_call(node):
        yield {node: cst.RemovalSentinel.REMOVE}, f"the call `{site.code(node.body[0].value)}` left out"
    if isinstance(node, cst.For) and dotted(node.target) == "_" and all(_warm_up_call(s) for s in node.body.body):
        yield {node: cst.RemovalSentinel.REMOVE}, f"the loop `{site.code(node).splitlines()[0]}` left out"
    if isinstance(node, cst.Call):
        name = dotted(node.func) or ""
        if name in ("jax.block_until_ready", "block_until_ready") and len(node.args) == 1:
            yield {node: node.args[0].value}, f"`{site.code(node)}` not waited for: `{name}` dropped"
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "block_until_ready" and not node.args:
            yield {node: node.func.value}, f"`{site.code(node)}` not waited for: `.block_until_ready()` dropped"


def _warm_up_call(statement: cst.CSTNode) -> bool:
    """Whether a statement is a call alone whose result is dropped (not a print, not an ``append``)."""
    if not (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.Call)
    ):
        return False
    func = statement.body[0].value.func
    return dotted(func) not in PRINTING and not (isinstance(func, cst.Attribute) and func.attr.value in COLLECTING)


def negate(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """``True`` and ``False`` exchanged, a comparison negated, a ``not`` dropped."""
    if isinstance(node, cst.Name) and node.value in FLIPPED:
        yield {node: node.with_changes(value=FLIPPED[node.value])}, f"`{node.value}` became `{FLIPPED[node.value]}`"
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        target = node.comparisons[0]
        negated = NEGATED.get(type(target.operator))
        if negated is not None:
            yield {target.operator: negated()}, f"`{site.code(node)}` negated"
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        yield {node: node.expression}, f"`{site.code(node)}`: its `not` dropped"


def mesh_axes(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """``jax.make_mesh``'s shape, or its axis names, in the other order."""
    if isinstance(node, cst.Call) and (dotted(node.func) or "").endswith("make_mesh"):
        for position, what in ((0, "shape"), (1, "axis names")):
            args = positional_args(node)
            value = args[position].value if len(args) > position else None
            if isinstance(value, cst.Tuple) and len(value.elements) >= 2:
                first, second = value.elements[:2]
                if site.code(first.value) != site.code(second.value):
                    elements = swap_values(list(value.elements), 0, 1)
                    yield {value: value.with_changes(elements=elements)}, f"the mesh's {what} swapped"


CONVERSIONS = {"float": "a Python float", "int": "a Python int", "bool": "a Python bool", "tuple": "a tuple"}


def value_type(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """The type a text names, lost: a conversion dropped or changed, a tuple written as a list."""
    if id(node) in site.printed:
        return
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and len(node.args) == 1:
        arg, name = node.args[0], node.func.value
        if arg.keyword is not None or arg.star:
            return
        if name in ("float", "int", "tuple") and not isinstance(arg.value, cst.GeneratorExp):
            yield {node: arg.value}, f"`{site.code(node)}` left as it was: not {CONVERSIONS[name]}"
        elif name == "bool":
            numpy_bool = cst.parse_expression(f"np.bool_({site.code(arg.value)})")
            yield {node: numpy_bool}, f"`{site.code(node)}` became a NumPy bool"
        elif name == "str":
            yield {node: node.with_changes(func=cst.Name("repr"))}, f"`{site.code(node)}` became `repr(...)`"
    if (
        isinstance(node, cst.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)  # a tuple bound to a name, not one unpacked
        and isinstance(node.value, cst.Tuple)
    ):
        elements = [e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in node.value.elements]
        listed = cst.List(elements=elements)
        yield {node.value: listed}, f"`{site.code(node.value)}` written as a list, not a tuple"


def axis_types(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """A mesh's ``AxisType.Explicit`` axes made ``Auto``, and the other way round."""
    if isinstance(node, cst.Attribute) and node.attr.value in ("Explicit", "Auto") and "AxisType" in site.code(node):
        other = "Auto" if node.attr.value == "Explicit" else "Explicit"
        yield {node.attr: cst.Name(other)}, f"`{site.code(node)}` became `AxisType.{other}`"


def restore(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """A setting not set back: a later ``jax.config.update`` of a name the cell set before made ``pass``."""
    if not isinstance(node, cst.Module):
        return
    seen: set[str] = set()
    for statement in matchers.findall(node, matchers.SimpleStatementLine()):
        name = config_update(statement)
        if name is not None and name in seen:
            kept = cst.SimpleStatementLine(
                [cst.Pass()], leading_lines=cst.ensure_type(statement, cst.SimpleStatementLine).leading_lines
            )
            yield {statement: kept}, f"`{name}` not set back: its later update left out"
        if name is not None:
            seen.add(name)


def whole_operand(node, site: Site) -> Iterator[tuple[Edit, str]]:
    """An operand of a ``shard_map`` put whole (``P()``) on every device right before it: the values stay
    right, what every device holds does not."""
    if not (isinstance(node, cst.Call) and (dotted(node.func) or "").endswith("shard_map")):
        return
    positional = positional_args(node)
    if not positional:
        return
    mesh = keyword_arg(node, "mesh") or (positional[1] if len(positional) > 1 else None)
    specs = keyword_arg(node, "in_specs") or (positional[2] if len(positional) > 2 else None)
    if mesh is None or specs is None:
        return
    count = len(specs.value.elements) if isinstance(specs.value, cst.Tuple) else 1
    replicated = f"jax.sharding.NamedSharding({parenthesized(site, mesh.value)}, jax.sharding.PartitionSpec())"
    for index in range(count):
        text = (
            f"(lambda _mapped: lambda *operands: _mapped(*(jax.device_put(v, {replicated}) if k == {index} else v"
            f" for k, v in enumerate(operands))))({site.code(node)})"
        )
        yield (
            {node: cst.parse_expression(text)},
            f"operand {index} of `{dotted(node.func)}` laid out whole (`P()`) on every device right before it",
        )


OPERATORS: dict[str, Callable[[cst.CSTNode, Site], Iterator[tuple[Edit, str]]]] = {
    "jit": drop_jit,
    "spec": partition_spec,
    "check_vma": check_vma,
    "collective": collective,
    "off_by_one": off_by_one,
    "swap": swap,
    "timing": timing,
    "negate": negate,
    "mesh": mesh_axes,
    "type": value_type,
    "axis_type": axis_types,
    "restore": restore,
    "whole_operand": whole_operand,
}
