"""Layouts: equivalence across spellings and axis types, words, pictures, and the layout checks' messages."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P
from recorded_facts import fact_of, missing_fact

from autograder.checks import (
    CheckFailure,
    Layout,
    MeshSpec,
    assert_fully_replicated,
    assert_layout,
    assert_spec_equivalent,
    assert_tree_layouts,
    describe_layout,
    format_spec,
    is_same_layout,
    render_layout,
)

MESH = MeshSpec((4, 2), ("a", "b"))
EXPLICIT = MeshSpec((4, 2), ("a", "b"), "explicit")
WIDE = MeshSpec((2, 4), ("a", "b"))
SHAPE = (8, 4)


def placed(mesh: MeshSpec, spec, shape=SHAPE):
    values = jnp.arange(np.prod(shape), dtype=jnp.float32).reshape(shape)
    return jax.device_put(values, NamedSharding(mesh.build(), spec))


def failure(check, *args) -> CheckFailure:
    with pytest.raises(CheckFailure) as info:
        check(*args)
    return info.value


# MeshSpec and CheckFailure


def test_mesh_spec_builds_cached_meshes_with_the_requested_axis_types():
    assert MESH.build() is MeshSpec((4, 2), ("a", "b")).build()
    assert MESH.build().axis_types == (AxisType.Auto, AxisType.Auto)
    assert EXPLICIT.build().axis_types == (AxisType.Explicit, AxisType.Explicit)
    assert MESH.build().device_ids.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert MeshSpec((4,), ("x",)).build().device_ids.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="'auto' or 'explicit'"):
        MeshSpec((8,), ("x",), "Auto")
    with pytest.raises(ValueError, match="differ in length"):
        MeshSpec((4, 2), ("x",))


def test_check_failure_is_an_assertion_error_whose_text_is_the_message():
    error = CheckFailure("`y`: expected A, found B", expected_picture="[A]", found_picture="[B]")
    assert isinstance(error, AssertionError) and str(error) == "`y`: expected A, found B"


# Building layouts


def test_slices_from_jax_become_integer_ranges():
    assert Layout.of_array(jnp.ones(4)).blocks == {0: ((0, 4),)}
    assert Layout.of_spec(MESH, P("a"), SHAPE).blocks[3] == ((2, 4), (0, 4))
    assert Layout.single_device(5, (2, 3)) == Layout((2, 3), {5: ((0, 2), (0, 3))})


def test_a_live_array_a_recorded_fact_and_its_spec_give_one_layout():
    arr = placed(MESH, P("a", "b"))
    assert is_same_layout(Layout.of_array(arr), Layout.of_spec(MESH, P("a", "b"), SHAPE))
    assert is_same_layout(Layout.of_fact(fact_of(arr)), Layout.of_array(arr))


@pytest.mark.parametrize(
    "left, right",
    [
        (P("a", None), P("a")),
        (P(), P(None, None)),
    ],
)
def test_spellings_of_one_layout_are_the_same_layout(left, right):
    assert left != right  # JAX's own == says they differ ...
    assert is_same_layout(Layout.of_spec(MESH, left, SHAPE), Layout.of_spec(MESH, right, SHAPE))


def test_auto_and_explicit_meshes_with_the_same_placement_are_the_same_layout():
    auto, explicit = placed(MESH, P("a", "b")), placed(EXPLICIT, P("a", "b"))
    assert auto.sharding != explicit.sharding
    assert is_same_layout(Layout.of_fact(fact_of(auto)), Layout.of_fact(fact_of(explicit)))


def test_swapped_axes_and_transposed_meshes_are_different_layouts():
    ab = Layout.of_spec(MESH, P("a", "b"), SHAPE)
    assert not is_same_layout(ab, Layout.of_spec(MESH, P("b", "a"), SHAPE))
    assert not is_same_layout(ab, Layout.of_spec(WIDE, P("a", "b"), SHAPE))
    assert not is_same_layout(Layout.of_spec(MESH, P(("a", "b")), SHAPE), Layout.of_spec(MESH, P(("b", "a")), SHAPE))


def test_a_numpy_array_has_no_layout():
    error = failure(Layout.of_fact, fact_of(np.ones((2, 2))), "y")
    assert "`y` is a numpy.ndarray float64[2,2], not a jax.Array on devices" in str(error)


def test_an_impossible_spec_is_a_value_error_for_the_grader():
    with pytest.raises(ValueError, match="names the mesh axis 'c'"):
        Layout.of_spec(MESH, P("c"), SHAPE)
    with pytest.raises(ValueError, match="does not divide it evenly"):
        Layout.of_spec(MESH, P("a"), (6, 4))


# Words and pictures


@pytest.mark.parametrize(
    "mesh, spec, words",
    [
        (WIDE, P("a", "b"), "rows split into 2 blocks and columns into 4 blocks, each block on 1 device (8 devices)"),
        (MESH, P("a"), "rows split into 4 blocks, each block replicated on 2 devices (8 devices)"),
        (MESH, P(None, "b"), "columns split into 2 blocks, each block replicated on 4 devices (8 devices)"),
        (MESH, P(), "fully replicated on 8 devices"),
    ],
)
def test_layouts_are_described_in_words(mesh, spec, words):
    assert describe_layout(Layout.of_spec(mesh, spec, SHAPE)) == words


def test_single_device_one_dimensional_and_uneven_layouts_in_words():
    assert describe_layout(Layout.single_device(3, SHAPE)) == "on 1 device (CPU 3)"
    assert describe_layout(Layout.of_spec(MESH, P("b"), (16,))).startswith("the array split into 2 blocks")
    uneven = Layout((8,), {0: ((0, 4),), 1: ((0, 4),), 2: ((4, 8),)})
    assert describe_layout(uneven) == "in 2 blocks held unevenly by 3 devices"


def test_the_picture_of_a_2d_layout_is_a_grid_labelled_by_devices():
    picture = render_layout(Layout.of_spec(MESH, P("a"), SHAPE))
    lines = picture.splitlines()
    assert lines[0].startswith("┌") and lines[-1].startswith("└")
    assert [line.strip("│ ") for line in lines if "CPU" in line] == ["CPU 0,1", "CPU 2,3", "CPU 4,5", "CPU 6,7"]
    grid = render_layout(Layout.of_spec(MESH, P("a", "b"), SHAPE))
    assert [line.replace(" ", "") for line in grid.splitlines() if "CPU" in line][0] == "│CPU0│CPU1│"
    assert "CPU 0,1,2,3,4,5,6,7" in render_layout(Layout.replicated(SHAPE))


def test_the_picture_of_a_1d_layout_is_one_row_and_block_widths_follow_block_sizes():
    row = render_layout(Layout.of_spec(MESH, P("b"), (16,))).splitlines()
    assert len(row) == 3 and row[1].split("│")[1:3] == [s.center(24) for s in ("CPU 0,2,4,6", "CPU 1,3,5,7")]
    uneven = render_layout(Layout((8,), {0: ((0, 6),), 1: ((6, 8),)})).splitlines()[1]
    left, right = uneven.split("│")[1:3]
    assert len(left) > 2 * len(right) and "CPU 0" in left and "CPU 1" in right


def test_higher_dimensional_layouts_are_listed_block_by_block():
    picture = render_layout(Layout.of_spec(MESH, P(None, "b"), (2, 4, 3)))
    assert picture.splitlines() == [
        "a 3-dimensional array; its blocks:",
        "  [0:2, 0:2, 0:3] on CPU 0,2,4,6",
        "  [0:2, 2:4, 0:3] on CPU 1,3,5,7",
    ]


# assert_layout


def test_assert_layout_passes_for_an_equivalent_spelling_on_another_axis_type():
    assert_layout(fact_of(placed(EXPLICIT, P("a"))), Layout.of_spec(MESH, P("a", None), SHAPE), "y")
    assert_layout(fact_of(placed(MESH, P(None, None))), Layout.of_spec(EXPLICIT, P(), SHAPE), "y")


def test_swapped_axis_order_fails_naming_both_layouts_and_the_swap():
    error = failure(assert_layout, fact_of(placed(MESH, P("b", "a"))), Layout.of_spec(MESH, P("a", "b"), SHAPE), "y_ba")
    message = str(error)
    assert message.startswith("`y_ba`: expected rows split into 4 blocks and columns into 2 blocks")
    assert "found rows split into 2 blocks and columns into 4 blocks" in message
    assert "swapped (rows 2 ways instead of 4, columns 4 ways instead of 2)" in message
    assert error.expected_picture == render_layout(Layout.of_spec(MESH, P("a", "b"), SHAPE))
    assert error.found_picture == render_layout(Layout.of_spec(MESH, P("b", "a"), SHAPE))


def test_a_2x4_mesh_where_4x2_was_expected_fails_with_the_swap_hint():
    message = str(
        failure(assert_layout, fact_of(placed(WIDE, P("a", "b"))), Layout.of_spec(MESH, P("a", "b"), SHAPE), "y")
    )
    assert "expected rows split into 4 blocks" in message and "found rows split into 2 blocks" in message
    assert "the mesh's shape is transposed" in message


def test_replicated_instead_of_sharded_fails_saying_so():
    message = str(failure(assert_layout, fact_of(placed(MESH, P())), Layout.of_spec(MESH, P("a", "b"), SHAPE), "y"))
    assert "expected rows split into 4 blocks and columns into 2 blocks" in message
    assert "found fully replicated on 8 devices" in message and "it is replicated, not sharded" in message


def test_sharded_instead_of_replicated_fails_saying_so():
    message = str(failure(assert_layout, fact_of(placed(MESH, P("a"))), Layout.replicated(SHAPE), "params"))
    assert "expected fully replicated on 8 devices, found rows split into 4 blocks" in message
    assert "every device should hold the whole array" in message


def test_an_array_never_placed_on_the_mesh_fails_as_single_device():
    message = str(failure(assert_layout, fact_of(jnp.ones(SHAPE)), Layout.of_spec(MESH, P("a"), SHAPE), "y"))
    assert "found on 1 device (CPU 0)" in message and "never placed on the mesh" in message


def test_another_device_set_fails_naming_the_devices():
    message = str(
        failure(
            assert_layout, fact_of(placed(MeshSpec((4,), ("a",)), P("a"))), Layout.of_spec(MESH, P("a"), SHAPE), "y"
        )
    )
    assert "found rows split into 4 blocks, each block on 1 device (4 devices)" in message
    assert "on devices 0, 1, 2, 3, not 0, 1, 2, 3, 4, 5, 6, 7" in message


def test_the_same_blocks_on_other_devices_fail_with_the_device_order_hint():
    error = failure(
        assert_layout, fact_of(placed(MESH, P(("b", "a")))), Layout.of_spec(MESH, P(("a", "b")), SHAPE), "y_rows_ab"
    )
    assert (
        "expected rows split into 8 blocks, each block on 1 device (8 devices), found rows split into 8 blocks"
        in str(error)
    )
    assert "held by other devices" in str(error) and "('a', 'b') versus ('b', 'a')" in str(error)
    assert error.expected_picture != error.found_picture


def test_missing_non_array_and_wrong_shape_fail_clearly():
    expected = Layout.of_spec(MESH, P("a"), SHAPE)
    assert str(failure(assert_layout, missing_fact("y"), expected, "y")) == "`y` is not defined after this task"
    assert str(failure(assert_layout, None, expected, "y")) == "`y` is not defined after this task"
    assert str(failure(assert_layout, fact_of(3.0), expected, "y")) == "`y`: expected an array, found float 3.0"
    message = str(failure(assert_layout, fact_of(placed(MESH, P("a"), (4, 8))), expected, "y"))
    assert message == "`y`: expected an array of shape (8, 4), found shape (4, 8) — it looks transposed"


def test_assert_fully_replicated():
    assert_fully_replicated(fact_of(placed(MESH, P())), "W")
    message = str(failure(assert_fully_replicated, fact_of(placed(MESH, P(None, "b"))), "W"))
    assert message.startswith("`W`: expected fully replicated on 8 devices, found columns split into 2 blocks")


# assert_spec_equivalent (a student's predicted PartitionSpec)


def test_a_predicted_spec_passes_when_equivalent():
    assert_spec_equivalent(fact_of(P("a")), P("a", None), MESH, SHAPE, "guess")
    assert_spec_equivalent(fact_of(P(None, None)), P(), MESH, SHAPE, "guess")
    sharding = fact_of(NamedSharding(MESH.build(), P(None, "b")))
    assert_spec_equivalent(sharding, P(None, "b"), MESH, SHAPE, "guess", accept=("PartitionSpec", "NamedSharding"))


def test_a_named_sharding_where_a_partition_spec_is_asked_fails_naming_both():
    error = failure(
        assert_spec_equivalent, fact_of(NamedSharding(MESH.build(), P(None, "b"))), P(None, "b"), MESH, SHAPE, "guess"
    )
    assert str(error) == (
        "`guess`: expected a PartitionSpec, found a NamedSharding of spec P(None, 'b') — a NamedSharding pairs"
        " a mesh with a spec: the spec alone is asked (its .spec)"
    )


def test_a_wrong_prediction_names_both_specs_and_layouts():
    error = failure(assert_spec_equivalent, fact_of(P("a", "b")), P(None, "b"), MESH, SHAPE, "Bt_C_spec")
    assert str(error).startswith(
        "`Bt_C_spec`: expected a spec equivalent to P(None, 'b') (columns split into 2 blocks, each block replicated"
        " on 4 devices (8 devices)), found P('a', 'b') (rows split into 4 blocks and columns into 2 blocks"
    )
    assert error.expected_picture and error.found_picture


@pytest.mark.parametrize(
    "spec, words",
    [
        (P("c"), "P('c') names the mesh axis 'c', but the mesh's axes are 'a', 'b'"),
        (P("a", None, None), "P('a', None, None) has 3 entries, but the array has only 2 dimensions"),
        (P("a", "a"), "P('a', 'a') uses the mesh axis 'a' for more than one dimension"),
    ],
)
def test_an_impossible_prediction_fails_clearly(spec, words):
    assert str(failure(assert_spec_equivalent, fact_of(spec), P("a"), MESH, SHAPE, "guess")) == f"`guess`: {words}"


def test_a_prediction_that_is_not_a_spec_fails():
    message = str(failure(assert_spec_equivalent, fact_of("P('a')"), P("a"), MESH, SHAPE, "guess"))
    assert message == "`guess`: expected a PartitionSpec equivalent to P('a'), found str \"P('a')\""
    message = str(failure(assert_spec_equivalent, fact_of("data"), P(None, "b"), MESH, SHAPE, "guess"))
    assert message == "`guess`: expected a PartitionSpec equivalent to P(None, 'b'), found str 'data'"
    assert "not defined" in str(failure(assert_spec_equivalent, missing_fact("guess"), P("a"), MESH, SHAPE, "guess"))


def test_format_spec():
    assert [format_spec(s) for s in (P("x", None), P(), P(("a", "b")), (("x",), None))] == [
        "P('x', None)",
        "P()",
        "P(('a', 'b'),)",
        "P('x', None)",
    ]


# assert_tree_layouts


def test_tree_layouts_pass_from_a_list_or_a_function_of_the_leaf_shape():
    params = [placed(MESH, P(), (4, 4)), placed(MESH, P(), (4,))]
    assert_tree_layouts(fact_of(params), Layout.replicated, "params_dp")
    assert_tree_layouts(fact_of(params), [Layout.replicated((4, 4)), Layout.replicated((4,))], "params_dp")


def test_a_wrong_leaf_is_named_by_its_path():
    params = {"W2": placed(MESH, P(None, "b"), (4, 4)), "b2": placed(MESH, P(), (4,))}
    expected = [Layout.of_spec(MESH, P(None, "b"), (4, 4)), Layout.of_spec(MESH, P("b"), (4,))]
    assert_tree_layouts(fact_of({"W2": params["W2"], "b2": placed(MESH, P("b"), (4,))}), expected, "params_tp")
    message = str(failure(assert_tree_layouts, fact_of(params), expected, "params_tp"))
    assert message.startswith("`params_tp['b2']`: expected the array split into 2 blocks")
    assert "found fully replicated on 8 devices" in message


def test_every_wrong_leaf_is_named():
    params = {"W2": placed(MESH, P(), (4, 4)), "b2": placed(MESH, P(), (4,))}
    expected = [Layout.of_spec(MESH, P(None, "b"), (4, 4)), Layout.of_spec(MESH, P("b"), (4,))]
    error = failure(assert_tree_layouts, fact_of(params), expected, "params_tp")
    assert str(error).startswith("2 of 2 arrays are not laid out as expected.")
    assert "`params_tp['W2']`: expected" in str(error) and "`params_tp['b2']`: expected" in str(error)
    assert error.expected_picture and error.found_picture


def test_a_tree_of_the_wrong_size_or_kind_fails():
    expected = [Layout.replicated((4,))] * 3
    assert str(failure(assert_tree_layouts, fact_of([jnp.ones(4)]), expected, "p")) == "`p`: expected 3 arrays, found 1"
    assert "expected a list, tuple or dict of arrays, found a jax.Array" in str(
        failure(assert_tree_layouts, fact_of(jnp.ones(4)), expected, "p")
    )


def test_too_little_or_too_much_splitting_fails_with_the_replication_hint():
    expected = Layout.of_spec(MESH, P("a", "b"), SHAPE)
    message = str(failure(assert_layout, fact_of(placed(MESH, P("a"))), expected, "y"))
    assert "found rows split into 4 blocks, each block replicated on 2 devices" in message
    assert "held by 2 devices instead of 1: a dimension that should be split is not" in message
    message = str(
        failure(assert_layout, fact_of(placed(MESH, P("a", "b"))), Layout.of_spec(MESH, P("a"), SHAPE), "y_a_rep")
    )
    assert "held by 1 device instead of 2: it is split over a mesh axis that should replicate it" in message
