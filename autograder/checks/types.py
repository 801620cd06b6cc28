"""Checks of JAX-level types (``jax.typeof``): shape, dtype and which mesh axes shard each dimension."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autograder.checks.found import CheckFailure, quote, require_defined
from autograder.checks.mesh import MeshSpec, spec_entries
from autograder.facts import Fact, TypeFact

AxesEntry = str | Sequence[str] | None
Axes = tuple[tuple[str, ...] | None, ...]


def normalise_axes(sharded_axes: Sequence[AxesEntry] | None, ndim: int, strict: bool = True) -> Axes:
    """One tuple of mesh axes (or None) per dimension; too many entries: ValueError, or cut off unless ``strict``."""
    entries = spec_entries(sharded_axes or ())
    if len(entries) > ndim and not strict:
        entries = entries[:ndim]
    if len(entries) > ndim:
        raise ValueError(f"{len(entries)} sharded-axes entries for a {ndim}-dimensional type")
    return tuple(entries) + (None,) * (ndim - len(entries))


def type_text(shape: Sequence[int], dtype: str, sharded_axes: Sequence[AxesEntry] | None) -> str:
    """The type as ``jax.typeof`` prints it: ``float32[128@x,2]``, ``float32[8@(a,b),4]``."""
    dims = []
    for size, axes in zip(shape, normalise_axes(sharded_axes, len(shape))):
        if axes is None:
            dims.append(str(size))
        elif len(axes) == 1:
            dims.append(f"{size}@{axes[0]}")
        else:
            dims.append(f"{size}@({','.join(axes)})")
    return f"{_dtype_name(dtype)}[{','.join(dims)}]"


def is_type(
    found: TypeFact | Fact | None,
    shape: Sequence[int],
    dtype,
    sharded_axes: Sequence[AxesEntry] | None,
    mesh: MeshSpec | None = None,
) -> bool:
    """True when ``assert_type`` would pass."""
    type_fact = found.typeof if isinstance(found, Fact) else found
    return type_fact is not None and not _differences(type_fact, tuple(shape), dtype, sharded_axes, mesh)


def assert_type(
    found: TypeFact | Fact | None,
    shape: Sequence[int],
    dtype,
    sharded_axes: Sequence[AxesEntry] | None,
    name: str,
    mesh: MeshSpec | None = None,
) -> None:
    """Fail unless ``found`` has the type, not its text: Auto and Explicit meshes print replicated arrays alike."""
    expected_text = type_text(shape, dtype, sharded_axes)
    type_fact = _type_fact(found, name, expected_text)
    differences = _differences(type_fact, tuple(shape), dtype, sharded_axes, mesh)
    if not differences:
        return
    found_text = type_fact.text or type_text(
        type_fact.shape, type_fact.dtype, normalise_axes(type_fact.sharded_axes, len(type_fact.shape), strict=False)
    )
    message = f"{quote(name)}: expected {expected_text}, found {found_text} ({'; '.join(differences)})"
    hint = _unsharded_hint(found, type_fact, shape, sharded_axes)
    raise CheckFailure(message + (f" — {hint}" if hint else ""))


def _type_fact(found: TypeFact | Fact | None, name: str, expected: str) -> TypeFact:
    if isinstance(found, TypeFact):
        return found
    if found is None:
        raise CheckFailure(f"{quote(name)}: no type was recorded: it is not defined after this task, or not an array")
    require_defined(found, name)
    if found.kind not in ("array", "type") or found.typeof is None:
        raise CheckFailure(
            f"{quote(name)}: expected a jax.Array of type {expected} (or that type, from jax.typeof),"
            f" found {found.describe()}"
        )
    return found.typeof


def _mesh_differences(found: TypeFact, mesh: MeshSpec) -> list[str]:
    want_types = (mesh.axis_types.capitalize(),) * len(mesh.axis_names)
    if not found.mesh_axis_names or found.axis_types is None:
        return [f"no mesh instead of a mesh with {_axes_text(mesh.axis_names, want_types)}"]
    if tuple(found.mesh_axis_names) != mesh.axis_names:
        return [f"mesh axes {found.mesh_axis_names} instead of {mesh.axis_names}"]
    if tuple(found.axis_types) != want_types:
        found_axes = _axes_text(found.mesh_axis_names, found.axis_types)
        return [f"a mesh with {found_axes} instead of {_axes_text(mesh.axis_names, want_types)}"]
    return []


def _axes_text(names: Sequence[str], types: Sequence[str]) -> str:
    return ", ".join(f"{n!r} {t}" for n, t in zip(names, types)) + " axes"


def _differences(
    found: TypeFact, shape: tuple[int, ...], dtype, sharded_axes, mesh: MeshSpec | None = None
) -> list[str]:
    differences = []
    if tuple(found.shape) != shape:
        differences.append(f"shape {tuple(found.shape)} instead of {shape}")
    if _dtype_name(found.dtype) != _dtype_name(dtype):
        differences.append(f"dtype {found.dtype} instead of {_dtype_name(dtype)}")
    if differences:
        return differences
    expected_axes = normalise_axes(sharded_axes, len(shape))
    found_axes = normalise_axes(found.sharded_axes, len(found.shape), strict=False)
    for dim, (want, got) in enumerate(zip(expected_axes, found_axes)):
        if want != got:
            differences.append(f"dimension {dim} {_over(got)} instead of {_over(want)}")
    if mesh is not None:
        differences.extend(_mesh_differences(found, mesh))
    return differences


def _over(axes: tuple[str, ...] | None) -> str:
    return "not sharded" if axes is None else "sharded over " + " and ".join(axes)


def _unsharded_hint(found, type_fact: TypeFact, shape, sharded_axes) -> str | None:
    expected_any = any(normalise_axes(sharded_axes, len(shape)))
    found_any = any(normalise_axes(type_fact.sharded_axes, len(type_fact.shape), strict=False))
    if not expected_any or found_any:
        return None
    mesh = found.sharding.mesh if isinstance(found, Fact) and found.sharding is not None else None
    if isinstance(found, Fact) and mesh is None:
        return "it was never placed on a mesh"
    if mesh is not None and "Explicit" in mesh.axis_types:
        return "the mesh axes are Explicit, but the array is replicated over them: it was not sharded"
    return (
        "the mesh axes are Auto, not Explicit: jax.typeof shows sharding only on an Explicit mesh"
        " (jax.make_mesh(..., axis_types=(AxisType.Explicit,)))"
    )


def _dtype_name(dtype) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype)
