"""Domain checks for the graders (layouts, types, collectives, values, timings), failing with CheckFailure; the
modules are mapped in docs/how-grading-works.md. The labs' graders import them from this door, loaded on use."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.checks.found import CheckFailure, assert_value_type, found_bool, found_number, found_tuple
    from autograder.checks.layout import (
        Layout,
        assert_axis_types,
        assert_fully_replicated,
        assert_layout,
        assert_spec_equivalent,
        assert_tree_layouts,
        describe_layout,
        is_same_layout,
        render_layout,
    )
    from autograder.checks.measurement import (
        MeasuredRatio,
        TimingStats,
        assert_faster_verdict,
        assert_speedup_claim,
        assert_time_consistent,
        called_once,
        format_seconds,
        load_allowance,
        measure_interleaved,
        measured_ratio,
        median_is_settled,
        students_load,
    )
    from autograder.checks.mesh import MeshSpec, assert_on_mesh, format_spec
    from autograder.checks.numeric import assert_allclose, assert_tree_allclose, is_allclose
    from autograder.checks.program import (
        COLLECTIVES,
        assert_body_never_holds_whole,
        assert_body_receives_blocks,
        assert_collectives,
        assert_jit_given_layouts,
        assert_jitted,
        assert_jitted_shard_map,
        assert_no_collectives,
        assert_one_shard_map,
        assert_operand_block,
        assert_operand_replicated,
        assert_ppermute_ring,
        assert_shard_map_collectives,
        assert_uses,
        collectives_in,
        describe_collectives,
        operand_blocks,
        shard_map_collectives,
    )
    from autograder.checks.timing_method import (
        assert_blocked,
        assert_calls,
        assert_made_once,
        assert_median,
        assert_timed_on,
        assert_warm,
        claimed_times,
        how_measured,
    )
    from autograder.checks.types import assert_type, is_type, normalise_axes, type_text

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
