"""Layouts (which block of an array each device holds), described in words and drawn as text, and their checks."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from autograder.checks.found import (
    CheckFailure,
    assert_value_type,
    leaf_name,
    quote,
    require_array,
    require_defined,
    require_tree,
)
from autograder.checks.mesh import MeshSpec, SpecLike, format_spec, spec_entries, spec_problem
from autograder.facts import Fact

Block = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Layout:
    """An array's shape and, for each device id, the block it holds: ``((start, stop), ...)`` per dim."""

    shape: tuple[int, ...]
    blocks: dict[int, Block] = field(hash=False)

    @classmethod
    def of_fact(cls, fact: Fact | None, name: str = "the value") -> Layout:
        fact = require_array(fact, name)
        if fact.sharding is None:
            raise CheckFailure(
                f"{quote(name)} is {fact.describe()}, not a jax.Array on devices, so it has no layout"
                " (place it with jax.device_put(..., NamedSharding(mesh, P(...))))"
            )
        assert fact.shape is not None  # the facts' reader gives every array fact a shape
        return cls(fact.shape, dict(fact.sharding.device_indices))

    @classmethod
    def of_spec(cls, mesh: MeshSpec | Mesh, spec: SpecLike, shape: Sequence[int]) -> Layout:
        """The layout of ``NamedSharding(mesh, spec)`` for ``shape``; ValueError for an impossible spec."""
        jax_mesh = mesh.build() if isinstance(mesh, MeshSpec) else mesh
        problem = spec_problem(dict(jax_mesh.shape), spec, shape)
        if problem:
            raise ValueError(f"{format_spec(spec)} {problem}")
        sharding = NamedSharding(jax_mesh, PartitionSpec(*spec_entries(spec)))
        return cls._of_index_map(sharding.devices_indices_map(tuple(shape)), shape)

    @classmethod
    def of_array(cls, array: jax.Array) -> Layout:
        return cls._of_index_map(array.sharding.devices_indices_map(array.shape), array.shape)

    @classmethod
    def single_device(cls, device_id: int, shape: Sequence[int]) -> Layout:
        return cls(tuple(shape), {device_id: tuple((0, n) for n in shape)})

    @classmethod
    def replicated(cls, shape: Sequence[int], n_devices: int = 8) -> Layout:
        return cls(tuple(shape), {d: tuple((0, n) for n in shape) for d in range(n_devices)})

    @classmethod
    def _of_index_map(cls, index_map: Mapping[Any, tuple[slice, ...]], shape: Sequence[int]) -> Layout:
        blocks = {
            device.id: tuple(index.indices(size)[:2] for index, size in zip(indices, shape))
            for device, indices in index_map.items()
        }
        return cls(tuple(shape), blocks)

    def holders(self) -> dict[Block, tuple[int, ...]]:
        by_block: dict[Block, list[int]] = {}
        for device, block in sorted(self.blocks.items()):
            by_block.setdefault(block, []).append(device)
        return {block: tuple(devices) for block, devices in by_block.items()}

    def splits(self) -> tuple[int, ...]:
        """How many distinct ranges each dimension is cut into."""
        return tuple(len({block[d] for block in self.blocks.values()}) for d in range(len(self.shape)))


WIDTH = 48  # characters across a whole 2-D picture, before labels widen narrow blocks
MIN_HEIGHT = 4  # text lines down a whole 2-D picture


def device_label(devices) -> str:
    """``CPU 0,4``: the label ``jax.debug.visualize_array_sharding`` gives a block."""
    return "CPU " + ",".join(str(d) for d in sorted(devices))


def render_layout(layout: Layout) -> str:
    """A box picture of a 1-D or 2-D layout; other ranks are listed block by block."""
    ndim = len(layout.shape)
    if ndim == 0:
        return f"a scalar, held by {device_label(layout.blocks)}"
    if ndim > 2:
        return _block_list(layout)
    row_cuts = _cuts(layout, 0) if ndim == 2 else [(0, 1)]
    col_cuts = _cuts(layout, ndim - 1)
    labels = [[_cell_label(layout, rows, cols, ndim) for cols in col_cuts] for rows in row_cuts]
    widths = [
        max(max(len(labels[r][c]) for r in range(len(row_cuts))) + 2, _share(cols, layout.shape[-1], WIDTH))
        for c, cols in enumerate(col_cuts)
    ]
    total_height = max(MIN_HEIGHT, len(row_cuts)) if ndim == 2 else 1
    heights = [max(1, _share(rows, layout.shape[0], total_height)) if ndim == 2 else 1 for rows in row_cuts]
    lines = [_border("┌", "┬", "┐", widths)]
    for r, height in enumerate(heights):
        if r:
            lines.append(_border("├", "┼", "┤", widths))
        for line in range(height):
            texts = [labels[r][c] if line == height // 2 else "" for c in range(len(widths))]
            lines.append("│" + "│".join(t.center(w) for t, w in zip(texts, widths)) + "│")
    lines.append(_border("└", "┴", "┘", widths))
    return "\n".join(lines)


def _cuts(layout: Layout, dim: int) -> list[tuple[int, int]]:
    """The intervals between consecutive block boundaries along ``dim``."""
    boundaries = {0, layout.shape[dim], *(bound for block in layout.blocks.values() for bound in block[dim])}
    return list(itertools.pairwise(sorted(boundaries)))


def _cell_label(layout: Layout, rows, cols, ndim: int) -> str:
    holders = []
    for device, block in layout.blocks.items():
        covers_cols = block[-1][0] <= cols[0] and cols[1] <= block[-1][1]
        covers_rows = ndim == 1 or (block[0][0] <= rows[0] and rows[1] <= block[0][1])
        if covers_cols and covers_rows:
            holders.append(device)
    return device_label(holders) if holders else "(no device)"


def _share(interval: tuple[int, int], size: int, total: int) -> int:
    return round(total * (interval[1] - interval[0]) / max(size, 1))


def _border(left: str, middle: str, right: str, widths: list[int]) -> str:
    return left + middle.join("─" * w for w in widths) + right


def _block_list(layout: Layout) -> str:
    lines = [f"a {len(layout.shape)}-dimensional array; its blocks:"]
    for block, devices in sorted(layout.holders().items()):
        ranges = ", ".join(f"{start}:{stop}" for start, stop in block)
        lines.append(f"  [{ranges}] on {device_label(devices)}")
    return "\n".join(lines)


def is_same_layout(a: Layout, b: Layout) -> bool:
    """Every device holds the same block: P('a', None) and P('a') are one layout."""
    return a.shape == b.shape and a.blocks == b.blocks


def describe_layout(layout: Layout) -> str:
    """The layout in words: "rows split into 4 blocks, each block replicated on 2 devices (8 devices)"."""
    n_devices = len(layout.blocks)
    if n_devices == 1:
        return f"on 1 device ({device_label(layout.blocks)})"
    holders = layout.holders()
    if len(holders) == 1:
        return f"fully replicated on {n_devices} devices"
    copies = {len(devices) for devices in holders.values()}
    splits = layout.splits()
    if len(copies) > 1 or math.prod(splits) != len(holders):
        return f"in {len(holders)} blocks held unevenly by {n_devices} devices"
    cut = [(dim, ways) for dim, ways in enumerate(splits) if ways > 1]
    words = [
        f"{_dim_name(dim, len(splits))} {'split ' if i == 0 else ''}into {ways} blocks"
        for i, (dim, ways) in enumerate(cut)
    ]
    (count,) = copies
    each = "each block on 1 device" if count == 1 else f"each block replicated on {count} devices"
    return f"{' and '.join(words)}, {each} ({n_devices} devices)"


def _dim_name(dim: int, ndim: int) -> str:
    if ndim == 1:
        return "the array"
    if ndim == 2:
        return ("rows", "columns")[dim]
    return f"dimension {dim}"


def assert_layout(found: Fact | None, expected: Layout, name: str) -> None:
    layout = Layout.of_fact(found, name)
    if layout.shape != expected.shape:
        transposed = " — it looks transposed" if layout.shape == expected.shape[::-1] else ""
        raise CheckFailure(
            f"{quote(name)}: expected an array of shape {expected.shape}, found shape {layout.shape}{transposed}",
            expected_picture=render_layout(expected),
            found_picture=render_layout(layout),
        )
    assert_same_layout(layout, expected, name)


def assert_same_layout(layout: Layout, expected: Layout, name: str, specs: tuple[str, str] | None = None) -> None:
    """Fail unless ``layout`` is ``expected``, drawing both; ``specs``: the expected and the found PartitionSpec."""
    if is_same_layout(layout, expected):
        return
    wanted, found = describe_layout(expected), describe_layout(layout)
    if specs:
        wanted, found = f"a spec equivalent to {specs[0]} ({wanted})", f"{specs[1]} ({found})"
    hint = layout_hint(expected, layout)
    raise CheckFailure(
        f"{quote(name)}: expected {wanted}, found {found}" + (f" — {hint}" if hint else ""),
        expected_picture=render_layout(expected),
        found_picture=render_layout(layout),
    )


def layout_hint(expected: Layout, found: Layout) -> str | None:
    """The usual cause when ``found`` is a known confusion of ``expected``, else None."""
    if set(found.blocks) != set(expected.blocks):
        if len(found.blocks) == 1:
            return "it sits on a single device: it was never placed on the mesh"
        return (
            f"it is on devices {', '.join(map(str, sorted(found.blocks)))},"
            f" not {', '.join(map(str, sorted(expected.blocks)))}:"
            " it was placed on another mesh or on only part of the devices"
        )
    found_splits, expected_splits = found.splits(), expected.splits()
    if len(found.holders()) == 1:
        return "every device holds the whole array: it is replicated, not sharded"
    if len(expected.holders()) == 1:
        return "it is sharded, but every device should hold the whole array (P() replicates)"
    if found_splits != expected_splits and sorted(found_splits) == sorted(expected_splits):
        wrong = ", ".join(
            f"{_dim_name(d, len(found_splits))} {f} ways instead of {e}"
            for d, (f, e) in enumerate(zip(found_splits, expected_splits))
            if f != e
        )
        return (
            f"the splits are swapped ({wrong}): the mesh axes are in the wrong order in the"
            " PartitionSpec, or the mesh's shape is transposed"
        )
    if set(found.holders()) == set(expected.holders()):
        return (
            "the blocks have the expected sizes but are held by other devices: check the order of the"
            " mesh axes within one entry, e.g. ('a', 'b') versus ('b', 'a'), and the mesh's device order"
        )
    found_copies = len(found.blocks) // len(found.holders())
    expected_copies = len(expected.blocks) // len(expected.holders())
    if found_copies > expected_copies:
        return (
            f"each block is held by {found_copies} devices instead of {expected_copies}: a dimension that"
            " should be split is not (a mesh axis is missing from the PartitionSpec)"
        )
    if found_copies < expected_copies:
        return (
            f"each block is held by {found_copies} device{'s' if found_copies > 1 else ''} instead of"
            f" {expected_copies}: it is split over a mesh axis that should replicate it"
        )
    return None


def assert_fully_replicated(found: Fact | None, name: str, n_devices: int = 8) -> None:
    layout = Layout.of_fact(found, name)
    assert_same_layout(layout, Layout.replicated(layout.shape, n_devices), name)


def assert_spec_equivalent(
    found_spec_fact: Fact | None,
    expected_spec: SpecLike,
    mesh: MeshSpec,
    shape: Sequence[int],
    name: str,
    accept: Sequence[str] = ("PartitionSpec",),
) -> None:
    """Fail unless the student's PartitionSpec lays out ``shape`` on ``mesh`` as ``expected_spec`` does."""
    fact = require_defined(found_spec_fact, name)
    if fact.kind != "spec":
        answer = format_spec(expected_spec)  # the lab's own answer, not an example in another lab's axes
        raise CheckFailure(f"{quote(name)}: expected a PartitionSpec equivalent to {answer}, found {fact.describe()}")
    assert_value_type(fact, accept, name)
    found_spec = fact.spec
    assert found_spec is not None  # the facts' reader gives every spec fact its entries
    try:
        found_layout = Layout.of_spec(mesh, found_spec, shape)
    except ValueError as problem:  # the spec cannot lay out the array: of_spec says why
        raise CheckFailure(f"{quote(name)}: {problem}") from None
    expected_layout = Layout.of_spec(mesh, expected_spec, shape)
    assert_same_layout(found_layout, expected_layout, name, (format_spec(expected_spec), format_spec(found_spec)))


ExpectedLayouts = Sequence[Layout] | Callable[[tuple[int, ...]], Layout]


def assert_tree_layouts(found: Fact | None, expected: ExpectedLayouts, name: str) -> None:
    """Each leaf (``jax.tree`` order) against a list of layouts, or a function of its shape (``Layout.replicated``)."""
    fact = require_tree(found, name, None if callable(expected) else len(expected))
    failures = []
    for index, leaf in enumerate(fact.leaves):
        leaf_label = leaf_name(fact, name, index)
        try:
            shape = Layout.of_fact(leaf, leaf_label).shape
            assert_layout(leaf, expected(shape) if callable(expected) else expected[index], leaf_label)
        except CheckFailure as failure:
            failures.append(failure)
    if len(failures) == 1:
        raise failures[0]
    if failures:  # every wrong leaf is named; the pictures are the first one's
        raise CheckFailure(
            f"{len(failures)} of {len(fact.leaves)} arrays are not laid out as expected. "
            + " ".join(f.message for f in failures),
            failures[0].expected_picture,
            failures[0].found_picture,
        )


def assert_axis_types(found: Fact | None, expected: str, name: str) -> None:
    """Fail unless the array lies on a mesh whose axes are all of type ``expected`` ('Auto' or 'Explicit')."""
    fact = require_array(found, name)
    mesh = fact.sharding.mesh if fact.sharding is not None else None
    if mesh is None:
        raise CheckFailure(
            f"{quote(name)}: expected an array placed on a mesh with {expected} axes, found"
            f" {fact.describe()} with no mesh"
            " (place it with jax.device_put(..., NamedSharding(mesh, ...)))"
        )
    wrong = [f"{axis} is {kind}" for axis, kind in zip(mesh.axis_names, mesh.axis_types) if kind != expected]
    if wrong:
        usual = (
            " — jax.make_mesh makes Explicit axes unless given axis_types=(AxisType.Auto, ...)"
            if expected == "Auto"
            else " — pass axis_types=(AxisType.Explicit, ...) to jax.make_mesh"
        )
        raise CheckFailure(
            f"{quote(name)}: expected a mesh with {expected} axes, found one where {', '.join(wrong)}{usual}"
        )
