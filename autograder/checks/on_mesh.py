"""Which mesh an array lies on, against a mesh of the grader's (``MeshSpec``).

A layout check compares blocks per device and cannot tell two meshes apart that put the same blocks on
the same devices; a task whose text names the mesh (its axis names, its axis types, its device order)
checks the recorded mesh itself. A mesh built anew that equals the notebook's is the same mesh to JAX.
"""

from __future__ import annotations

import numpy as np

from autograder.checks.failure import CheckFailure
from autograder.checks.found import quote
from autograder.checks.mesh import MeshSpec
from autograder.facts import Fact, MeshFact

__all__ = ["assert_on_mesh", "mesh_words"]


def mesh_words(mesh: MeshFact) -> str:
    """ "a (2, 4) mesh with Auto axes named ('x', 'y') over devices [[0, 1, 2, 3], [4, 5, 6, 7]]"."""
    kinds = "/".join(sorted(set(mesh.axis_types)))
    return (
        f"a {tuple(mesh.shape)} mesh with {kinds} axes named {tuple(mesh.axis_names)}"
        f" over devices {np.asarray(mesh.device_ids).tolist()}"
    )


def assert_on_mesh(fact: Fact, expected: MeshSpec, name: str, what: str, device_order: bool = True) -> None:
    """Fail unless the array lies on a mesh of ``expected``'s shape, axis names and axis types, over the
    devices of the mesh ``expected`` builds — in its order with ``device_order``, in any order otherwise
    (for a text that fixes none). ``what`` is the mesh as the message names it ("`mesh`, the (2, 4) ...")."""
    sharding = fact.sharding if fact.kind == "array" else None
    mesh = sharding.mesh if sharding is not None else None
    if mesh is None:
        raise CheckFailure(
            f"{quote(name)}: expected an array on {what}, found {fact.describe()} on no mesh"
            " (place it with jax.device_put(..., NamedSharding(mesh, P(...))))"
        )
    built = expected.build()
    expected_ids = np.vectorize(lambda d: d.id, otypes=[int])(built.devices)
    expected_type = "Explicit" if expected.axis_types == "explicit" else "Auto"
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
        raise CheckFailure(f"{quote(name)}: expected it on {what}, found it on {mesh_words(mesh)}: {'; '.join(wrong)}")
