"""What the mutation operators read and write of a cell's syntax tree (libcst)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

JIT = {"jax.jit", "jit", "nnx.jit"}
SPEC = {"P", "PartitionSpec", "jax.sharding.PartitionSpec"}
PRINTING = {"print", "jax.debug.visualize_array_sharding", "jax.debug.print", "display"}
FLIPPED = {"True": "False", "False": "True"}
TIGHT = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))  # ``name=value``, as code spells it

# An edit: the nodes to replace (by identity) with their replacements, or removed (cst.RemovalSentinel).
Edit = dict


class Replace(cst.CSTTransformer):
    """Each node of ``edit`` replaced (libcst's nodes are equal only to themselves)."""

    def __init__(self, edit: Edit):
        super().__init__()
        self.edit = edit

    def on_leave(self, original_node, updated_node):
        return self.edit.get(original_node, updated_node)


@dataclass(frozen=True)
class Site:
    """What an operator sees of a node's cell; a node only printed shows its type nowhere but in the output."""

    module: cst.Module
    axis_names: tuple[str, ...]
    times: bool
    printed: frozenset[int] = frozenset()  # ids of nodes inside a printing call

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()


def dotted(node: cst.CSTNode) -> str | None:
    """``jax.lax.psum`` for the expression naming it, or None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def positional_args(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def with_args(call: cst.Call, args: list[cst.Arg]) -> cst.Call:
    """``call`` with ``args``, commas between them and none after the last."""
    fixed = [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if i == len(args) - 1
        else a.with_changes(
            comma=a.comma if isinstance(a.comma, cst.Comma) else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
        for i, a in enumerate(args)
    ]
    return call.with_changes(args=fixed)


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def swap_values(args: list, i: int, j: int) -> list:
    """The values of ``i`` and ``j`` exchanged, each keeping its comma and spacing."""
    args = list(args)
    args[i], args[j] = args[i].with_changes(value=args[j].value), args[j].with_changes(value=args[i].value)
    return args


def parenthesized(site: Site, node: cst.BaseExpression) -> str:
    code = site.code(node)
    simple = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.List, cst.Tuple)
    return code if isinstance(node, simple) else f"({code})"


def spec_axes(args) -> list[str]:
    """The axis names a PartitionSpec's arguments name, alone or in tuples."""
    strings = [
        string.evaluated_value
        for arg in args
        for string in ([e.value for e in arg.value.elements] if isinstance(arg.value, cst.Tuple) else [arg.value])
        if isinstance(string, cst.SimpleString)
    ]
    return [axis for axis in strings if isinstance(axis, str)]  # a bytes literal names no mesh axis


def name_argument(arg: cst.Arg) -> cst.Name | None:
    """The name a call passes as a plain positional argument (no keyword, no star), else None."""
    return arg.value if arg.keyword is None and not arg.star and isinstance(arg.value, cst.Name) else None


def assigned_name(statement: cst.CSTNode) -> cst.Name | None:
    """The name a statement ``name = ...`` binds, or None for any other statement."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        assign = statement.body[0]
        if (
            isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
        ):
            return assign.targets[0].target
    return None


def config_update(statement: cst.CSTNode) -> str | None:
    """The setting a ``jax.config.update("name", value)`` statement changes, or None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    expression = statement.body[0]
    call = expression.value if isinstance(expression, cst.Expr) else None
    if not (isinstance(call, cst.Call) and (dotted(call.func) or "").endswith("config.update") and call.args):
        return None
    first = call.args[0].value
    return first.evaluated_value if isinstance(first, cst.SimpleString) else None  # type: ignore[return-value]
