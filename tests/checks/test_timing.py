"""Timing: interleaved, blocked measurement, and the checks of students' timing claims (fake numbers)."""

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from recorded_facts import fact_of, missing_fact

from autograder.checks import (
    CheckFailure,
    MeasuredRatio,
    TimingStats,
    assert_faster_verdict,
    assert_speedup_claim,
    assert_time_consistent,
    format_seconds,
    measure_interleaved,
    measured_ratio,
    measurement,
    median_is_settled,
    students_load,
)


def message(check, *args, **kwargs) -> str:
    with pytest.raises(CheckFailure) as info:
        check(*args, **kwargs)
    return str(info.value)


# measure_interleaved


def test_measure_interleaved_times_real_jitted_functions():
    x = jnp.ones((64, 64))
    small, large = jax.jit(lambda: x + 1), jax.jit(lambda: jnp.linalg.matrix_power(x, 16))
    stats = measure_interleaved({"small": small, "large": large}, repeats=5, warmup=1)
    assert set(stats) == {"small", "large"}
    for stat in stats.values():
        assert isinstance(stat, TimingStats) and len(stat.samples) == 5 and stat.median > 0
        assert stat.median == sorted(stat.samples)[2]


def test_measure_interleaved_alternates_the_two_sides_round_by_round_after_warmup():
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in ("a", "b")}
    stats = measure_interleaved(fns, repeats=3, warmup=1)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert [len(s.samples) for s in stats.values()] == [3, 3]


def test_measure_interleaved_blocks_until_the_result_is_ready():
    class Slow:
        def block_until_ready(self):
            time.sleep(0.01)
            return self

    stats = measure_interleaved({"slow": Slow}, repeats=2, warmup=0)
    assert stats["slow"].median >= 0.009
    with pytest.raises(ValueError):
        measure_interleaved({"slow": Slow}, repeats=0)


class FakeClock:
    """Stands in for ``time`` in the measurement module: a call "takes" exactly the seconds it is given."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def taking(self, seconds):
        seconds = iter(seconds)

        def call():
            self.now += next(seconds)

        return call


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(measurement, "time", fake)
    return fake


def test_measure_interleaved_stops_early_once_every_median_is_settled(clock):
    steady = clock.taking([0.010, 0.0101, 0.0099] * 10)
    stats = measure_interleaved({"steady": steady}, repeats=15, warmup=1, min_repeats=5)
    assert stats["steady"].samples == pytest.approx((0.0101, 0.0099, 0.010, 0.0101, 0.0099))


def test_measure_interleaved_takes_every_round_while_the_times_scatter(clock):
    noisy = clock.taking([0.001] + [0.002, 0.006, 0.001, 0.004] * 4)
    stats = measure_interleaved({"noisy": noisy}, repeats=12, warmup=1, min_repeats=5)
    assert len(stats["noisy"].samples) == 12


def test_measure_interleaved_waits_for_every_side_to_settle(clock):
    steady, noisy = clock.taking([0.003] * 20), clock.taking([0.002, 0.004, 0.006] * 7)
    stats = measure_interleaved({"steady": steady, "noisy": noisy}, repeats=9, warmup=0, min_repeats=5)
    assert [len(s.samples) for s in stats.values()] == [9, 9]
    steady, settling = clock.taking([0.003] * 20), clock.taking([0.002, 0.006] + [0.004] * 20)
    stats = measure_interleaved({"steady": steady, "settling": settling}, repeats=15, warmup=0, min_repeats=5)
    assert [len(s.samples) for s in stats.values()] == [8, 8]  # x(2)..x(7) of 8 exclude both outliers


def test_a_median_is_settled_when_its_order_statistic_interval_is_tight():
    assert median_is_settled([1.0, 1.02, 0.99, 1.01, 1.03], 0.1)
    assert not median_is_settled([1.0, 1.02, 0.99, 1.01], 0.1)  # 4 samples cannot give 90 %
    assert not median_is_settled([1.0, 1.02, 0.99, 1.01, 1.3], 0.1)  # one slow call, and only 5 samples
    # with 8 samples the interval is x(2)..x(7): one outlier on each side is allowed
    assert median_is_settled([0.5, 1.0, 1.02, 0.99, 1.01, 1.0, 1.03, 2.0], 0.1)
    assert not median_is_settled([0.5, 0.8, 1.02, 0.99, 1.01, 1.0, 1.03, 2.0], 0.1)


def test_a_verdict_left_open_by_scattered_rounds_gets_more_rounds_until_it_is_decided(clock):
    """A third of the first 15 rounds slowed the faster side threefold: the median ratio (0.3) points one way,
    the interval reaches past 1. Three steady rounds more close it, and the measurement stops there."""
    flipped = [0.030 if i % 3 == 0 else 0.003 for i in range(15)] + [0.003] * 40
    fast, slow = clock.taking(flipped), clock.taking([0.010] * 55)
    open_at_15 = measured_ratio(stats(*flipped[:15]), stats(*[0.010] * 15))
    assert open_at_15.median == pytest.approx(0.3) and open_at_15.verdicts() == {False, True}
    stats_ = measure_interleaved(
        {"fast": fast, "slow": slow}, repeats=15, warmup=0, min_repeats=5, verdict=("fast", "slow")
    )
    assert len(stats_["fast"].samples) == 18  # at 18 rounds the interval is x(6)..x(13): all 0.3
    assert measured_ratio(stats_["fast"], stats_["slow"]).verdicts() == {False}


def test_a_verdict_that_stays_open_ends_after_three_times_its_rounds(clock):
    flipped = [0.030 if i % 5 in (0, 2) else 0.003 for i in range(60)]  # two rounds in five slowed
    fast, slow = clock.taking(flipped), clock.taking([0.010] * 60)
    stats_ = measure_interleaved(
        {"fast": fast, "slow": slow}, repeats=15, warmup=0, min_repeats=5, verdict=("fast", "slow")
    )
    assert len(stats_["fast"].samples) == 45
    assert measured_ratio(stats_["fast"], stats_["slow"]).verdicts() == {False, True}


def test_a_tie_or_a_measurement_without_a_verdict_takes_no_extra_round(clock):
    scattered = [0.002, 0.006, 0.001, 0.004] * 20
    tie = measure_interleaved(
        {"a": clock.taking(scattered), "b": clock.taking(scattered)},
        repeats=12,
        warmup=0,
        min_repeats=5,
        verdict=("a", "b"),
    )
    assert len(tie["a"].samples) == 12  # the ratio is 1 in every round: more rounds cannot call it
    flipped = [0.030 if i % 3 == 0 else 0.003 for i in range(30)]
    plain = measure_interleaved(
        {"fast": clock.taking(flipped), "slow": clock.taking([0.010] * 30)}, repeats=15, warmup=0
    )
    assert len(plain["fast"].samples) == 15
    with pytest.raises(ValueError, match="the verdict's two sides"):
        measure_interleaved({"a": clock.taking(scattered)}, verdict=("a", "b"))


# assert_time_consistent


def test_a_time_within_the_factor_passes():
    assert_time_consistent(fact_of(0.012), 0.010, "t_single")
    assert_time_consistent(0.0026, 0.010, "t_single")
    assert_time_consistent(fact_of(np.float64(0.039)), 0.010, "t_single")  # numpy's float64 is a float
    assert_time_consistent(fact_of(jnp.float32(0.039)), 0.010, "t_single", accept=("float", "jax.Array"))


@pytest.mark.parametrize(
    "value, found",
    [
        (jnp.float32(0.012), "a jax.Array float32[] — write float(...)"),
        (np.float32(0.012), "a numpy.float32 0.012"),
        (np.asarray(0.012), "a numpy.ndarray float64[] — write float(...)"),
    ],
)
def test_a_time_that_is_not_a_python_float_fails_where_a_float_is_asked(value, found):
    text = message(assert_time_consistent, fact_of(value), 0.010, "t_single")
    assert text.startswith(f"`t_single`: expected a Python float, found {found}"), text


def test_a_verdict_that_is_a_numpy_bool_fails_where_a_bool_is_asked():
    ratio = MeasuredRatio(2.0, 1.5, 2.5, 15)
    text = message(assert_faster_verdict, fact_of(np.bool_(True)), ratio, "cpu_faster")
    assert text == "`cpu_faster`: expected a Python bool (True or False), found a numpy.bool True — write bool(...)"
    assert_faster_verdict(fact_of(True), ratio, "cpu_faster")
    assert_faster_verdict(fact_of(np.bool_(True)), ratio, "cpu_faster", accept=("bool", "numpy.bool"))


def test_a_time_far_below_the_grader_s_looks_like_dispatch():
    text = message(assert_time_consistent, fact_of(2e-5), 0.010, "t_sharded")
    assert text.startswith("`t_sharded`: you report 20 µs per call, but the grader measures 10 ms — more than 4× less.")
    assert "only the dispatch was timed" in text and "block_until_ready" in text


def test_a_time_far_above_the_grader_s_looks_like_compilation():
    text = message(assert_time_consistent, 0.5, 0.010, "t_single")
    assert text.startswith("`t_single`: you report 500 ms per call, but the grader measures 10 ms — more than 4× more.")
    assert "includes compilation" in text


@pytest.mark.parametrize("claimed", [10.0, 3.1, 36.0])
def test_a_time_about_1000_times_the_grader_s_looks_like_milliseconds(claimed):
    text = message(assert_time_consistent, fact_of(claimed), 0.010, "t_single")
    assert "about 1000×" in text and "milliseconds where seconds were asked" in text
    assert f"{claimed / 1000:.4g} s" in text


def test_a_time_far_above_but_not_near_1000_times_is_not_called_milliseconds():
    assert "milliseconds" not in message(assert_time_consistent, 500.0, 0.010, "t_single")


@pytest.mark.parametrize(
    "claimed, words",
    [
        (missing_fact("t"), "`t` is not defined after this task"),
        (fact_of("fast"), "`t`: expected a number of seconds or a ratio, found str 'fast'"),
        (fact_of(float("inf")), "`t`: expected a finite positive number, found inf"),
        (fact_of(-1.0), "`t`: expected a finite positive number, found -1.0"),
        (True, "`t`: expected a number of seconds or a ratio, found bool True"),
    ],
)
def test_a_claimed_time_must_be_a_finite_positive_number(claimed, words):
    assert message(assert_time_consistent, claimed, 0.01, "t") == words


# assert_speedup_claim


def test_a_consistent_speedup_near_the_grader_s_passes():
    assert_speedup_claim(fact_of(0.7), fact_of(0.007), fact_of(0.010), 0.9, "speedup")
    assert_speedup_claim(0.72, 0.007, 0.010, 0.3, "speedup")  # 0.72 is within 2.5 × 0.3


def test_a_speedup_not_computed_from_the_two_times_fails():
    text = message(assert_speedup_claim, 2.0, 0.007, 0.010, 0.9, "speedup", a_name="t_single", b_name="t_sharded")
    assert text == (
        "`speedup`: expected `t_single` / `t_sharded` = 7 ms / 10 ms = 0.7, found 2: the speedup must be"
        " computed from your two times"
    )


def test_a_speedup_far_from_the_grader_s_fails_with_both_ratios():
    text = message(assert_speedup_claim, 8.0, 0.08, 0.01, 0.9, "speedup")
    assert text.startswith(
        "`speedup`: your speedup 8 is outside 0.36–2.25, the range allowed around the grader's"
        " measured 0.9 (a factor of 2.5)"
    )


def test_a_speedup_with_a_bad_time_names_that_time():
    assert message(assert_speedup_claim, 1.0, 0.0, 0.01, 1.0, "speedup", a_name="t_single") == (
        "`t_single`: expected a finite positive number, found 0.0"
    )


def test_a_speedup_from_a_time_far_from_the_grader_s_fails_on_that_time_first():
    """Given the grader's own times, the speedup is sound only if both claimed times are: 0.7 is a / b and
    near the grader's ratio, but t_sharded is 50 times the grader's measurement."""
    assert_speedup_claim(0.7, 0.007, 0.010, 0.9, "speedup", a_name="t_single", b_name="t_sharded")
    text = message(
        assert_speedup_claim,
        0.7,
        0.007,
        0.010,
        0.9,
        "speedup",
        a_name="t_single",
        b_name="t_sharded",
        measured_a=0.007,
        measured_b=0.0002,
    )
    assert text == message(assert_time_consistent, 0.010, 0.0002, "t_sharded")
    assert text.startswith("`t_sharded`:")
    assert_speedup_claim(0.7, 0.007, 0.010, 0.9, "speedup", measured_a=0.006, measured_b=0.011)


LOADED_GATHERED = (0.010, 0.011, 0.012, 0.020, 0.040)  # the grader's calls on a loaded machine
LOADED_COLLECTIVE = (0.025, 0.027, 0.030, 0.050, 0.100)


def test_a_right_speedup_whose_two_loops_met_different_load_passes():
    """A right answer timed one function, then the other, and the load met its second loop only. Both
    times lie within the grader's calls (fastest 10 and 25 ms, slowest 40 and 100 ms); their ratio, 3.2×
    below the grader's median, is one the load made of them, not a mistake."""
    measured = {"measured_a": stats(*LOADED_GATHERED), "measured_b": stats(*LOADED_COLLECTIVE)}
    assert_speedup_claim(0.125, 0.010, 0.080, 0.4, "speedup", factor=3.0, **measured)


def test_the_same_speedup_fails_where_the_grader_s_calls_were_steady():
    steady = {"measured_a": stats(0.010, 0.0101, 0.0102), "measured_b": stats(0.025, 0.0252, 0.0255)}
    text = message(assert_speedup_claim, 0.125, 0.010, 0.080, 0.4, "speedup", factor=3.0, **steady)
    assert text.startswith(
        "`speedup`: your speedup 0.125 is outside 0.131–1.22, the range allowed around the grader's measured"
        " 0.4, 0.392–0.408 from its fastest and slowest calls, (a factor of 3)"
    )


def test_a_speedup_beyond_what_load_can_make_of_sound_times_fails():
    """Each time within 4× of the grader's calls, but 100 ms ÷ 10 ms is more than 3× the greatest ratio
    those calls allow (40 ms ÷ 25 ms)."""
    measured = {"measured_a": stats(*LOADED_GATHERED), "measured_b": stats(*LOADED_COLLECTIVE)}
    text = message(assert_speedup_claim, 10.0, 0.100, 0.010, 0.4, "speedup", factor=3.0, **measured)
    assert text.startswith(
        "`speedup`: your speedup 10 is outside 0.0333–4.8, the range allowed around the grader's measured 0.4,"
        " 0.1–1.6 from its fastest and slowest calls, (a factor of 3)"
    )


# measured_ratio: the grader's ratio, round by round, with the interval of its median


def stats(*samples):
    return TimingStats(sorted(samples)[len(samples) // 2], samples)


def test_the_measured_ratio_pairs_the_samples_of_each_round():
    single = stats(0.030, 0.031, 0.060, 0.029, 0.030)  # round 3 was slowed on both sides alike
    sharded = stats(0.040, 0.041, 0.080, 0.039, 0.040)
    ratio = measured_ratio(single, sharded)
    assert ratio.rounds == 5 and ratio.median == pytest.approx(0.75)
    assert ratio.low == pytest.approx(0.029 / 0.039) and ratio.high == pytest.approx(0.031 / 0.041)
    assert ratio.verdicts() == {False}


def test_the_interval_of_the_median_ratio_drops_the_outer_rounds_when_there_are_enough():
    ratios = [0.5, 0.7, 0.72, 0.74, 0.75, 0.76, 0.78, 0.8, 1.4]  # 9 rounds: [x(2), x(8)] holds 90 %
    ratio = measured_ratio(stats(*ratios), stats(*[1.0] * 9))
    assert (ratio.low, ratio.median, ratio.high) == (0.7, 0.75, 0.8)


def test_scattered_rounds_give_an_interval_that_holds_one():
    ratio = measured_ratio(stats(0.6, 0.7, 1.1, 0.8, 1.3), stats(*[1.0] * 5))
    assert ratio.low < 1 < ratio.high and ratio.verdicts() == {False, True}


def test_too_few_rounds_call_nothing():
    ratio = measured_ratio(stats(0.5, 0.5, 0.5, 0.5), stats(1.0, 1.0, 1.0, 1.0))
    assert ratio.median == 0.5 and ratio.verdicts() == {False, True}


@pytest.mark.parametrize("single, sharded", [((0.1, 0.1), (0.1,)), ((), ()), ((0.1,) * 5, (0.1, 0.1, 0.0, 0.1, 0.1))])
def test_a_measured_ratio_needs_positive_samples_round_by_round(single, sharded):
    with pytest.raises(ValueError):
        measured_ratio(TimingStats(0.1, single), TimingStats(0.1, sharded))


# assert_faster_verdict: decided by the grader's measured interval alone

BELOW = MeasuredRatio(0.75, 0.71, 0.8, 9)
ABOVE = MeasuredRatio(1.3, 1.2, 1.4, 9)
ACROSS = MeasuredRatio(0.9, 0.7, 1.05, 15)


@pytest.mark.parametrize(
    "claimed, measured",
    [
        (False, BELOW),
        (True, ABOVE),
        (True, ACROSS),
        (False, ACROSS),
        (True, MeasuredRatio(1.0, 1.0, 1.0)),
        (False, MeasuredRatio(0.9, 0.8, 1.0)),  # an interval ending at 1 holds it
    ],
)
def test_a_verdict_on_the_side_of_the_interval_or_within_it_passes(claimed, measured):
    assert_faster_verdict(fact_of(claimed), measured, "cpu_faster")


def test_a_verdict_against_an_interval_that_excludes_one_fails():
    assert message(assert_faster_verdict, fact_of(True), BELOW, "cpu_faster") == (
        "`cpu_faster`: expected False, found True: the grader measured single ÷ sharded = 0.75 (90% interval"
        " 0.71–0.8 over 9 rounds), so the sharded code is clearly slower on this machine (by more than 10%)"
    )
    assert message(assert_faster_verdict, False, ABOVE, "cpu_faster") == (
        "`cpu_faster`: expected True, found False: the grader measured single ÷ sharded = 1.3 (90% interval"
        " 1.2–1.4 over 9 rounds), so the sharded code is clearly faster on this machine (by more than 10%)"
    )


@pytest.mark.parametrize("measured", [MeasuredRatio(1.05, 1.02, 1.08, 15), MeasuredRatio(0.95, 0.92, 0.97, 15)])
def test_a_race_closer_than_ten_percent_is_not_called(measured):
    """An interval clear of 1 but within 10 % of it: the student's own measurement, taken at another moment,
    may honestly fall on either side, so either verdict passes."""
    assert measured.verdicts() == {False, True}
    for claimed in (True, False):
        assert_faster_verdict(fact_of(claimed), measured, "cpu_faster")


def test_a_verdict_that_is_not_a_bool_fails_whatever_was_measured():
    assert message(assert_faster_verdict, fact_of(1), ACROSS, "cpu_faster") == (
        "`cpu_faster`: expected True or False, found int 1"
    )


def test_nothing_the_student_reports_changes_the_verdict():
    """The verdict check takes the grader's measurement and the claim, nothing else: times that agree with
    the claim (swapped ones, say) are not an argument."""
    with pytest.raises(TypeError):
        assert_faster_verdict(fact_of(True), BELOW, "cpu_faster", own_times=(fact_of(0.04), fact_of(0.03)))


def test_a_measured_ratio_must_be_ordered_and_positive():
    for median, low, high in ((0.0, 0.0, 1.0), (0.9, 1.0, 1.1), (1.2, 1.0, 1.1)):
        with pytest.raises(ValueError, match="a measured ratio needs"):
            MeasuredRatio(median, low, high)


def test_the_fastest_and_slowest_calls_of_the_samples():
    assert stats(0.01).fast == stats(0.01).slow == 0.01
    few = stats(0.01, 0.02, 0.015)  # few samples: the smallest and the largest
    assert (few.fast, few.slow) == (0.01, 0.02)
    steady = stats(*([0.010] * 8 + [0.011, 0.012, 0.05]))  # one outlier among 11: the 90th percentile skips it
    assert 1.0 <= steady.slow / steady.fast < 1.5


def test_the_time_band_runs_from_the_grader_s_fastest_to_its_slowest_calls():
    quiet = stats(*([0.010] * 11))
    noisy = stats(0.004, 0.006, 0.010, 0.010, 0.010, 0.012, 0.015, 0.02, 0.025, 0.03, 0.03)  # under a quota
    assert noisy.slow / noisy.fast > 2.5 and noisy.median == 0.012
    assert noisy.fast == pytest.approx(0.006) and noisy.slow == pytest.approx(0.03)  # 10th and 90th percentiles
    five_times = fact_of(0.060)  # 5× the noisy median, 6× the quiet one
    assert "more than 4× more" in message(assert_time_consistent, five_times, quiet, "t")
    assert "more than 4× more" in message(assert_time_consistent, five_times, 0.012, "t")  # a bare median: 4×
    assert_time_consistent(five_times, noisy, "t")  # within 4× of the grader's slowest calls
    assert "more than 4× less" in message(assert_time_consistent, fact_of(0.002), quiet, "t")
    assert_time_consistent(fact_of(0.002), noisy, "t")  # within 4× of its fastest
    text = message(assert_time_consistent, fact_of(0.03 * 4 * 1.2), noisy, "t")
    assert text.startswith("`t`: you report 144 ms per call, but the grader measures 12 ms, 30 ms at its slowest —")
    assert "more than 4× more" in text


def test_load_never_lets_a_time_far_below_the_grader_s_fastest_calls_pass():
    """A loaded machine slows most of the grader's calls (the median climbs tenfold) but not its fastest:
    a right time taken under the same load passes, and a time 5× below the fastest call (the clock stopped
    at the dispatch) still fails, however scattered the rest."""
    loaded = stats(0.010, 0.011, 0.012, 0.05, 0.1, 0.2, 0.3, 0.4, 0.4)
    assert loaded.median == 0.1 and loaded.fast == 0.010 and loaded.slow / loaded.fast == 40
    for right in (0.011, 0.1, 0.4, 1.2):
        assert_time_consistent(fact_of(right), loaded, "t_sharded")
    text = message(assert_time_consistent, fact_of(0.002), loaded, "t_sharded")
    assert text.startswith(
        "`t_sharded`: you report 2 ms per call, but the grader measures 100 ms, 10 ms at its fastest — more"
        " than 4× less."
    )
    assert "only the dispatch was timed" in text


def test_format_seconds():
    assert [format_seconds(s) for s in (2.5, 0.0123, 4.5e-5, 3e-9)] == ["2.5 s", "12.3 ms", "45 µs", "3 ns"]


# The load each side met


def loaded_stats(share: float | None, *samples: float) -> TimingStats:
    return dataclasses.replace(stats(*samples), others_share=share)


def test_a_time_taken_under_more_load_than_the_grader_s_may_be_as_many_times_longer():
    """Other work took three quarters of the processors while the student's cells ran (a stretch of 4),
    none while the grader measured: a right time read 5× the grader's passes, 17× does not."""
    idle = loaded_stats(0.0, *([0.010] * 9))
    five_times = fact_of(0.050)
    assert "more than 4× more" in message(assert_time_consistent, five_times, idle, "t")
    with students_load(lambda: 0.75):
        assert_time_consistent(five_times, idle, "t")
        assert_time_consistent(fact_of(0.16), idle, "t")
        text = message(assert_time_consistent, fact_of(0.17), idle, "t")
    assert "more than 16× more (other work took 75% of the processors while your timed cells ran, 0% while" in text
    assert "the range reaches 4× higher for it)" in text


def test_the_same_load_on_both_sides_allows_nothing_more():
    loaded = loaded_stats(0.75, *([0.010] * 9))
    with students_load(lambda: 0.75):
        text = message(assert_time_consistent, fact_of(0.050), loaded, "t")
    assert "more than 4× more." in text and "other work" not in text


def test_a_grader_measuring_under_more_load_lets_a_student_s_time_be_as_many_times_shorter():
    """The grader's fastest calls were slowed too (its whole measurement met a stretch of 2): a right time
    taken on an idle machine may read 5× below them; a dispatch-only time, 100× and more below, still fails
    under the largest allowance."""
    loaded = loaded_stats(0.5, *([0.010] * 9))
    with students_load(lambda: 0.0):
        assert_time_consistent(fact_of(0.002), loaded, "t")
        assert "more than 8× less (" in message(assert_time_consistent, fact_of(0.001), loaded, "t")
    crowded = loaded_stats(0.99, *([0.010] * 9))
    with students_load(lambda: 0.0):
        text = message(assert_time_consistent, fact_of(0.0001), crowded, "t")
    assert "more than 40× less" in text and "only the dispatch was timed" in text


def test_without_a_reading_of_the_student_s_cells_nothing_is_allowed_for_them():
    """A check run outside a grading (no share set), or a run that read nothing (a CPU quota)."""
    idle = loaded_stats(0.0, *([0.010] * 9))
    assert "more than 4× more." in message(assert_time_consistent, fact_of(0.050), idle, "t")
    with students_load(lambda: None):
        assert "more than 4× more." in message(assert_time_consistent, fact_of(0.050), idle, "t")


def test_the_load_allowance_reaches_a_speedup_s_two_times():
    idle_a, idle_b = loaded_stats(0.0, *([0.020] * 9)), loaded_stats(0.0, *([0.010] * 9))
    claims = (fact_of(2.0), fact_of(0.100), fact_of(0.050))  # each time 5× the grader's, the ratio right
    assert "more than 4× more" in message(assert_speedup_claim, *claims, 2.0, "s", measured_a=idle_a, measured_b=idle_b)
    with students_load(lambda: 0.75):
        assert_speedup_claim(*claims, 2.0, "s", measured_a=idle_a, measured_b=idle_b)


def test_the_grader_s_measurement_reads_the_load_it_met(monkeypatch):
    """What others took of the processors from the measurement's first call to its last, as others_load
    reads it for this process."""
    spans = []
    monkeypatch.setattr(measurement, "start_reading", lambda own: spans.append(("start", own())) or "reading")
    monkeypatch.setattr(measurement, "others_share", lambda reading, own: spans.append((reading, own())) or 0.4)
    stats = measure_interleaved({"a": lambda: None, "b": lambda: None}, repeats=2, warmup=0)
    assert {name: s.others_share for name, s in stats.items()} == {"a": 0.4, "b": 0.4}
    assert [what for what, _ in spans] == ["start", "reading"] and spans[0][1] <= spans[1][1]
