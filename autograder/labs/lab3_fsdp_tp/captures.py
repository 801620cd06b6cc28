"""Lab 3, "FSDP and tensor parallelism": what the harness reads from the kernel after each task."""

from autograder.facts import Call, Input, Probe, TaskCapture
from autograder.labs.lab3_fsdp_tp.reference import (
    BATCH,
    FRESH_LAYER,
    FRESH_OPS_SHAPE,
    HIDDEN,
    LAB_LAYER,
    MESH_2D,
    MLP_WIDTH,
    OP_COLLECTIVES,
    X_SHAPE,
)

# Uncommitted inputs, like the lab's own x, A, W1, W2: shard_map places them as its in_specs say, and
# jax.jit(in_shardings=...) accepts them (it refuses arrays committed to another layout).
MLP_INPUTS = (Input((BATCH, HIDDEN), key=1), Input((HIDDEN, MLP_WIDTH), key=2), Input((MLP_WIDTH, HIDDEN), key=3))


def _on_mesh(shape, key, spec):
    """An input committed to ``mesh`` in a layout its function's in_specs do not name: the texts of t1-t3
    say the shard_maps accept inputs in any layout on `mesh` (jax.jit given in_shardings refuses them)."""
    return Input(shape, key=key, mesh=MESH_2D, spec=spec)


CAPTURES = (
    TaskCapture(
        "t1",
        names=("B",),
        calls=(
            Call(
                "fsdp_matmul",
                "fsdp_matmul",
                hlo=True,
                args=(Input((BATCH, HIDDEN), key=1), Input((HIDDEN, HIDDEN), key=2)),
            ),
            Call(
                "fsdp_matmul_other_layout",
                "fsdp_matmul",
                args=(
                    _on_mesh((BATCH, HIDDEN), 5, ("model", None)),
                    _on_mesh((HIDDEN, HIDDEN), 6, (None, ("data", "model"))),
                ),
            ),
        ),
    ),
    TaskCapture(
        "t2",
        names=("C",),
        calls=(
            Call("tp_mlp", "tp_mlp", hlo=True, args=MLP_INPUTS),
            Call(
                "tp_mlp_other_layout",
                "tp_mlp",
                args=(
                    _on_mesh((BATCH, HIDDEN), 5, ("data", None)),
                    _on_mesh((HIDDEN, MLP_WIDTH), 6, ("model", "data")),
                    _on_mesh((MLP_WIDTH, HIDDEN), 7, (None, "data")),
                ),
            ),
        ),
    ),
    TaskCapture(
        "t3",
        names=("D", "D_jit"),
        calls=(
            Call("fsdp_tp_mlp", "fsdp_tp_mlp", hlo=True, args=MLP_INPUTS),
            Call("fsdp_tp_jit", "fsdp_tp_jit", args=MLP_INPUTS),
            Call(
                "fsdp_tp_mlp_other_layout",
                "fsdp_tp_mlp",
                args=(
                    _on_mesh((BATCH, HIDDEN), 5, ("model", "data")),
                    _on_mesh((HIDDEN, MLP_WIDTH), 6, ()),
                    _on_mesh((MLP_WIDTH, HIDDEN), 7, ("data", "model")),
                ),
            ),
        ),
    ),
    TaskCapture(
        "t4",
        names=("collective_times",),
        calls=tuple(
            Call(op, f"collective_fns['{op}']", hlo=True, args=(Input(FRESH_OPS_SHAPE, key=4),))
            for op in OP_COLLECTIVES
        ),
        times_code=True,
    ),
    TaskCapture(
        "t5",
        names=("X_t", "X_roundtrip"),
        calls=(Call("all_to_all", "all_to_all", hlo=True, args=(Input(X_SHAPE, key=1),)),),
    ),
    TaskCapture(
        "t6",
        names=("layer_out",),
        probes=(
            Probe(
                "lab_layer",
                "lab_layer",
                (("hidden_dim", LAB_LAYER["hidden_dim"]), ("num_heads", LAB_LAYER["num_heads"])),
            ),
            Probe("fresh_layer", "fresh_layer", tuple(FRESH_LAYER.items())),
        ),
    ),
)
