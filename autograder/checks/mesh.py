"""Meshes the grader builds (``MeshSpec``), PartitionSpecs read as plain entries, and the mesh an array lies on:
a layout check cannot tell apart two meshes that put the same blocks on the same devices."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, PartitionSpec

from autograder.checks.found import CheckFailure, entry_text, quote
from autograder.facts import Fact

AXIS_TYPES = {"auto": AxisType.Auto, "explicit": AxisType.Explicit}
SpecEntries = tuple[tuple[str, ...] | None, ...]
SpecLike = PartitionSpec | Sequence[str | Sequence[str] | None]


@dataclass(frozen=True)
class MeshSpec:
    """A device mesh as data: ``MeshSpec((4, 2), ("a", "b"), "auto").build()`` makes the jax Mesh."""

    shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: str = "auto"

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(self.shape))
        object.__setattr__(self, "axis_names", tuple(self.axis_names))
        if len(self.shape) != len(self.axis_names):
            raise ValueError(f"mesh shape {self.shape} and axis names {self.axis_names} differ in length")
        if self.axis_types not in AXIS_TYPES:
            raise ValueError(f"axis_types must be 'auto' or 'explicit', not {self.axis_types!r}")

    @property
    def sizes(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.shape))

    def build(self) -> Mesh:
        """The jax Mesh over the first ``prod(shape)`` devices (built once, then cached)."""
        return _build(self)


@functools.cache
def _build(spec: MeshSpec) -> Mesh:
    axis_types = (AXIS_TYPES[spec.axis_types],) * len(spec.shape)
    devices = jax.devices()[: math.prod(spec.shape)]
    return jax.make_mesh(spec.shape, spec.axis_names, axis_types=axis_types, devices=devices)


def spec_entries(spec: SpecLike) -> SpecEntries:
    """A PartitionSpec (or a fact's spec tuple) as one tuple of axis names, or None, per dimension: a name alone
    is a tuple of one, no names at all (None, ``()``) is None."""
    return tuple((entry,) if isinstance(entry, str) else tuple(entry or ()) or None for entry in spec)


def format_spec(spec: SpecLike) -> str:
    """``P('x', None)``, ``P(('a', 'b'),)``, ``P()``: how a spec reads in messages."""
    parts = [entry_text(entry) for entry in spec_entries(spec)]
    if len(parts) == 1 and parts[0].startswith("("):
        parts.append("")
    return "P(" + ", ".join(parts).rstrip() + ")"


def spec_problem(sizes: dict[str, int], spec: SpecLike, shape: Sequence[int]) -> str | None:
    """Why ``spec`` cannot lay out an array of ``shape`` on a mesh with these axis sizes, or None."""
    entries = spec_entries(spec)
    if len(entries) > len(shape):
        return f"has {len(entries)} entries, but the array has only {len(shape)} dimensions"
    used: list[str] = []
    for dim, entry in enumerate(entries):
        for axis in entry or ():
            if axis not in sizes:
                known = ", ".join(repr(a) for a in sizes)
                return f"names the mesh axis {axis!r}, but the mesh's axes are {known}"
            if axis in used:
                return f"uses the mesh axis {axis!r} for more than one dimension"
            used.append(axis)
        ways = math.prod(sizes[a] for a in entry or ())
        if shape[dim] % ways:
            return f"splits dimension {dim} (size {shape[dim]}) {ways} ways, which does not divide it evenly"
    return None


def assert_on_mesh(fact: Fact, expected: MeshSpec, name: str, what: str, device_order: bool = True) -> None:
    """Fail unless the array lies on ``expected``'s mesh (devices in order with ``device_order``), named ``what``."""
    sharding = fact.sharding if fact.kind == "array" else None
    mesh = sharding.mesh if sharding is not None else None
    if mesh is None:
        raise CheckFailure(
            f"{quote(name)}: expected an array on {what}, found {fact.describe()} on no mesh"
            " (place it with jax.device_put(..., NamedSharding(mesh, P(...))))"
        )
    expected_ids = expected.build().device_ids
    expected_type = expected.axis_types.capitalize()
    wrong = []
    if tuple(mesh.shape) != tuple(expected.shape):
        wrong.append(f"its shape is {tuple(mesh.shape)}, not {tuple(expected.shape)}")
    if tuple(mesh.axis_names) != tuple(expected.axis_names):
        wrong.append(f"its axes are named {tuple(mesh.axis_names)}, not {tuple(expected.axis_names)}")
    other_types = sorted({t for t in mesh.axis_types if t != expected_type})
    if other_types:
        usual = (
            " (jax.make_mesh makes Explicit axes unless given axis_types=(AxisType.Auto, ...))"
            if expected_type == "Auto"
            else ""
        )
        wrong.append(f"its axes are {'/'.join(other_types)}, not {expected_type}{usual}")
    ids = np.asarray(mesh.device_ids)
    if sorted(ids.ravel().tolist()) != sorted(expected_ids.ravel().tolist()):
        wrong.append(f"it holds devices {sorted(ids.ravel().tolist())}, not all {expected_ids.size}")
    elif device_order and not wrong and not np.array_equal(ids, expected_ids):
        wrong.append(f"its devices are in the order {ids.tolist()}, not {expected_ids.tolist()}")
    if wrong:
        kinds = "/".join(sorted(set(mesh.axis_types)))
        raise CheckFailure(
            f"{quote(name)}: expected it on {what}, found it on a {tuple(mesh.shape)} mesh with {kinds} axes named"
            f" {tuple(mesh.axis_names)} over devices {ids.tolist()}: {'; '.join(wrong)}"
        )
