"""Values: a student's array or number against the grader's, and the messages when they differ."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from recorded_facts import fact_of, missing_fact

from autograder.checks import CheckFailure, MeshSpec, assert_allclose, assert_tree_allclose, is_allclose

EXPECTED = np.arange(16.0, dtype=np.float32).reshape(4, 4)


def message(check, *args, **kwargs) -> str:
    with pytest.raises(CheckFailure) as info:
        check(*args, **kwargs)
    return str(info.value)


def test_a_sharded_array_fact_with_the_expected_values_passes():
    mesh = MeshSpec((4, 2), ("a", "b")).build()
    y = jax.device_put(jnp.asarray(EXPECTED), NamedSharding(mesh, P("a", "b")))
    assert_allclose(fact_of(y), EXPECTED, "y")
    assert_allclose(fact_of(y), EXPECTED.astype(np.float64) + 1e-7, "y")  # float32 vs float64 is the same kind
    assert_allclose(y, EXPECTED, "y")  # a live array, or numpy, works too


def test_differing_values_report_count_max_difference_and_first_index():
    found = EXPECTED.copy()
    found[1, 2] += 0.5
    found[3, 0] -= 2.0
    assert message(assert_allclose, fact_of(found), EXPECTED, "w") == (
        "`w`: 2 of 16 values differ from the expected (max abs difference 2); first at index (1, 2):"
        " expected 6, found 6.5 (tolerance rtol=1e-05, atol=1e-06)"
    )


def test_tolerances_are_honoured():
    found = EXPECTED + 1e-3
    assert "16 of 16 values differ" in message(assert_allclose, found, EXPECTED, "w")
    assert_allclose(found, EXPECTED, "w", atol=1e-2)
    assert is_allclose(found, EXPECTED, atol=1e-2) and not is_allclose(found, EXPECTED)


def test_nan_values_are_counted():
    found = EXPECTED.copy()
    found[0, 1] = np.nan
    assert message(assert_allclose, fact_of(found), EXPECTED, "w").startswith(
        "`w`: 1 of 16 values differ from the expected (max abs difference nan; 1 found values are NaN);"
        " first at index (0, 1): expected 1, found nan"
    )


def test_transposed_values_and_shapes_are_pointed_out():
    assert message(assert_allclose, EXPECTED.T, EXPECTED, "w").endswith(
        " — the values are the transpose of the expected ones"
    )
    assert message(assert_allclose, np.ones((2, 8)), np.ones((8, 2)), "w") == (
        "`w`: expected shape (8, 2), found shape (2, 8) — it looks transposed"
    )
    assert message(assert_allclose, np.ones(3), np.ones((3, 1)), "w") == "`w`: expected shape (3, 1), found shape (3,)"


def test_the_kind_of_dtype_must_match():
    assert message(assert_allclose, fact_of(np.arange(16).reshape(4, 4)), EXPECTED, "A") == (
        "`A`: expected floating-point values (float32), found integer values (int64)"
    )
    assert_allclose(fact_of(jnp.ones(3, jnp.bfloat16)), np.ones(3, np.float32), "A")


def test_numbers_recorded_as_values_are_compared_as_scalars():
    assert_allclose(fact_of(0.25), np.float32(0.25), "loss_dp")
    assert message(assert_allclose, fact_of(0.5), 0.25, "loss_dp") == (
        "`loss_dp`: expected 0.25, found 0.5 (abs difference 0.25) (tolerance rtol=1e-05, atol=1e-06)"
    )
    assert "found nan" in message(assert_allclose, fact_of(float("nan")), 0.25, "loss_dp")


def test_missing_and_non_array_values_fail_clearly():
    assert message(assert_allclose, missing_fact("y"), EXPECTED, "y") == "`y` is not defined after this task"
    assert message(assert_allclose, fact_of("abc"), EXPECTED, "y") == "`y`: expected an array, found str 'abc'"
    assert message(assert_allclose, fact_of(True), EXPECTED, "y") == "`y`: expected an array, found bool True"


def test_trees_are_compared_leaf_by_leaf_and_a_wrong_leaf_is_named():
    params = [(jnp.ones((2, 2)), jnp.zeros(2)), (jnp.ones((2, 1)), jnp.zeros(1))]
    expected = [np.ones((2, 2)), np.zeros(2), np.ones((2, 1)), np.zeros(1)]
    assert_tree_allclose(fact_of(params), expected, "params_sharded")
    expected[3] = np.ones(1)
    assert message(assert_tree_allclose, fact_of(params), expected, "params_sharded") == (
        "`params_sharded[1][1]`: 1 of 1 values differ from the expected (max abs difference 1); first at index (0,):"
        " expected 1, found 0 (tolerance rtol=1e-05, atol=1e-06)"
    )
    assert message(assert_tree_allclose, fact_of(params[:1]), expected, "p") == "`p`: expected 4 arrays, found 2"
    assert "expected a list, tuple or dict of arrays" in message(
        assert_tree_allclose, fact_of(jnp.ones(2)), expected, "p"
    )


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_closeness_is_numpys_isclose_entry_by_entry(dtype):
    """Infinities of either sign, NaNs (equal to each other), huge and tiny values, each tolerance."""
    from autograder.checks.numeric import _isclose

    specials = np.array([0.0, 1.0, -1.0, 1e-7, 1e308, -1e308, np.inf, -np.inf, np.nan, 1 + 1e-6, 1 + 2e-5])
    got, want = (a.ravel() for a in np.meshgrid(specials, specials))
    if dtype is np.complex128:  # every pair of parts: real parts as above, imaginary parts reversed
        got, want = _complex(got, want[::-1]), _complex(want, got[::-1])
    for rtol, atol in ((1e-5, 1e-6), (0.0, 0.0), (1e-3, 1e-5)):
        np.testing.assert_array_equal(
            _isclose(got, want, rtol, atol), np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        )


def _complex(real, imag):
    out = np.empty(real.shape, np.complex128)
    out.real, out.imag = real, imag
    return out
