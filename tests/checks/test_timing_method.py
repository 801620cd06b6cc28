"""The timing method judged from the timing record: ways of timing right and wrong, each recorded by the
kernel's own timing record (kernel/timing_record.py) in a process of its own, and each wrong one failing the
one check of its mistake and no other; and every time that is not a median of several calls failing the
median check."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import autograder.kernel.timing_record as timing_record
from autograder.checks import CheckFailure
from autograder.checks.timing_method import (
    assert_blocked,
    assert_calls,
    assert_made_once,
    assert_median,
    assert_timed_on,
    assert_warm,
    how_measured,
)
from autograder.facts.fact_reader import read_timing_record

SET_UP = """
import time, timeit, statistics
import jax, jax.numpy as jnp, numpy as np
f = jax.jit(lambda a: jnp.tanh(a @ a.T))
g = jax.jit(lambda a: jnp.sin(a @ a.T))
x = jnp.ones((96, 48))
small = jnp.ones((16, 8))
def loss(a):
    return jnp.sum(jnp.tanh(a) ** 2)
"""
# name -> (the timing code, which binds t; does it need the set-up's functions compiled first)
STYLES = {
    "loop_warm": """
f(x).block_until_ready()
start = time.perf_counter()
for _ in range(20):
    f(x).block_until_ready()
t = (time.perf_counter() - start) / 20
""",
    "median_warm": """
jax.block_until_ready(f(x))
times = []
for _ in range(9):
    s = time.perf_counter()
    jax.block_until_ready(f(x))
    times.append(time.perf_counter() - s)
t = float(np.median(times))
""",
    "warm_up_timed_and_dropped_in_turns": """
def once(fn):
    s = time.perf_counter()
    jax.block_until_ready(fn(x))
    return time.perf_counter() - s
once(f); once(small_f)
a, b = [], []
for _ in range(5):
    a.append(once(f)); b.append(once(small_f))
t = float(np.median(a))
""",
    "timeit_least": """
jax.block_until_ready(f(x))
rounds = timeit.repeat(lambda: jax.block_until_ready(f(x)), number=5, repeat=4)
t = min(rounds) / 5
""",
    "statistics_median": """
jax.block_until_ready(f(x))
times = []
for _ in range(7):
    s = time.perf_counter()
    jax.block_until_ready(f(x))
    times.append(time.perf_counter() - s)
t = statistics.median(times)
""",
    "jnp_median": """
jax.block_until_ready(f(x))
times = []
for _ in range(7):
    s = time.perf_counter()
    f(x).block_until_ready()
    times.append(time.perf_counter() - s)
t = float(jnp.median(jnp.array(times)))
""",
    "sorted_middle": """
jax.block_until_ready(f(x))
times = []
for _ in range(9):
    s = time.perf_counter()
    jax.block_until_ready(f(x))
    times.append(time.perf_counter() - s)
t = sorted(times)[len(times) // 2]
""",
    "sorted_upper_middle": """
jax.block_until_ready(f(x))
times = []
for _ in range(10):
    s = time.perf_counter()
    jax.block_until_ready(f(x))
    times.append(time.perf_counter() - s)
t = sorted(times)[len(times) // 2]
""",
    "timeit_median": """
jax.block_until_ready(f(x))
rounds = timeit.repeat(lambda: jax.block_until_ready(f(x)), number=3, repeat=5)
t = statistics.median(rounds) / 3
""",
    "median_of_loops_waited_at_their_end": """
jax.block_until_ready(f(x))
rounds = []
for _ in range(5):
    s = time.perf_counter()
    for _ in range(4):
        out = f(x)
    jax.block_until_ready(out)
    rounds.append((time.perf_counter() - s) / 4)
t = float(np.median(rounds))
""",
    "mean_warm": """
jax.block_until_ready(f(x))
times = []
for _ in range(9):
    s = time.perf_counter()
    jax.block_until_ready(f(x))
    times.append(time.perf_counter() - s)
t = float(np.mean(times))
""",
    "least_warm": """
jax.block_until_ready(f(x))
times = []
for _ in range(9):
    s = time.perf_counter()
    jax.block_until_ready(f(x))
    times.append(time.perf_counter() - s)
t = min(times)
""",
    "total_of_calls": """
jax.block_until_ready(f(x))
times = []
for _ in range(9):
    s = time.perf_counter()
    jax.block_until_ready(f(x))
    times.append(time.perf_counter() - s)
t = sum(times)
""",
    "single_call": """
jax.block_until_ready(f(x))
s = time.perf_counter()
jax.block_until_ready(f(x))
t = time.perf_counter() - s
""",
    "loop_cold": """
start = time.perf_counter()
for _ in range(20):
    f(x).block_until_ready()
t = (time.perf_counter() - start) / 20
""",
    "median_cold": """
times = []
for _ in range(9):
    s = time.perf_counter()
    jax.block_until_ready(f(x))
    times.append(time.perf_counter() - s)
t = float(np.median(times))
""",
    "loop_unblocked": """
f(x).block_until_ready()
start = time.perf_counter()
for _ in range(20):
    f(x)
t = (time.perf_counter() - start) / 20
""",
    "loop_small_array": """
f(small).block_until_ready()
start = time.perf_counter()
for _ in range(20):
    f(small).block_until_ready()
t = (time.perf_counter() - start) / 20
""",
    "made_anew": """
jax.block_until_ready(jax.jit(jax.grad(loss))(x))
times = []
for _ in range(5):
    s = time.perf_counter()
    jax.block_until_ready(jax.jit(jax.grad(loss))(x))
    times.append(time.perf_counter() - s)
t = float(np.median(times))
""",
    "too_few_calls": """
f(x).block_until_ready()
start = time.perf_counter()
for _ in range(4):
    f(x).block_until_ready()
t = (time.perf_counter() - start) / 4
""",
}
# Each style's mistake: the one check it fails.
FAILS = {
    "loop_cold": "warm",
    "median_cold": "warm",
    "loop_unblocked": "blocked",
    "loop_small_array": "timed_on",
    "made_anew": "made_once",
    "too_few_calls": "calls",
    "single_call": "calls",
}
# The styles whose time is a median of several timed calls' times, as the labs' texts ask; every other
# style fails the median check (a mean, a least, a total, one call), whatever its other mistakes.
MEDIANS = {
    "median_warm",
    "warm_up_timed_and_dropped_in_turns",
    "statistics_median",
    "jnp_median",
    "sorted_middle",
    "sorted_upper_middle",
    "timeit_median",
    "median_of_loops_waited_at_their_end",
    "median_cold",
    "made_anew",
}
# Either middle of an even number of times is one span's own time: the other checks see the spans that give
# it, one of them or an odd run about it, which are fewer than the calls made (assert_calls cannot count them).
EVEN_MIDDLES = {"sorted_upper_middle"}
DRIVER = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("_autograder_timing", sys.argv[1])
timing = importlib.util.module_from_spec(spec)
sys.modules["_autograder_timing"] = timing
spec.loader.exec_module(timing)
timing.install()
styles = json.loads(sys.stdin.read())
out = {}
for name, (set_up, code) in styles.items():
    namespace = {}
    exec(compile(set_up, f"/cells/{name}_set_up.py", "exec"), namespace)
    namespace["small_f"] = namespace["jax"].jit(lambda a: a * 2.0)  # another function, on one device
    namespace["small_f"](namespace["jax"].device_put(namespace["x"], namespace["jax"].devices()[0]))
    timing.start(name)
    exec(compile(code, f"/cells/{name}.py", "exec"), namespace)
    out[name] = {"record": timing.take(), "t": float(namespace["t"])}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict:
    """Each style's record and claimed time, from one process that loads the timing record as the kernel
    does. Every style gets fresh functions (its own set-up), so that its first call compiles."""
    styles = {name: (SET_UP, textwrap.dedent(code)) for name, code in STYLES.items()}
    env = {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(Path(timing_record.__file__))],
        input=json.dumps(styles),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {name: (read_timing_record(v["record"]), v["t"]) for name, v in json.loads(done.stdout).items()}


def _verdicts(record, claimed) -> dict[str, str | None]:
    claims = {"t": claimed}
    checks = {
        "warm": lambda: assert_warm(record, claims),
        "made_once": lambda: assert_made_once(record, claims),
        "blocked": lambda: assert_blocked(record, claims),
        "timed_on": lambda: assert_timed_on(record, claims, [(96, 96), (96, 48)], "`f(x)` or the gradient at `x`"),
        "calls": lambda: assert_calls(record, claims, 5),
    }
    verdicts: dict[str, str | None] = {}
    for name, check in checks.items():
        try:
            check()
            verdicts[name] = None
        except CheckFailure as failure:
            verdicts[name] = str(failure)
    return verdicts


@pytest.mark.parametrize("style", [style for style in STYLES if style not in EVEN_MIDDLES])
def test_each_way_of_timing_fails_the_check_of_its_mistake_alone(recorded, style):
    record, claimed = recorded[style]
    verdicts = _verdicts(record, claimed)
    failed = {name for name, message in verdicts.items() if message}
    expected = {FAILS[style]} if style in FAILS else set()
    assert failed == expected, (verdicts, how_measured(record, claimed))
    for name in failed:
        assert "expected" in verdicts[name] and "found" in verdicts[name]


@pytest.mark.parametrize("style", list(STYLES))
def test_the_median_check_fails_every_time_that_is_not_a_median(recorded, style):
    record, claimed = recorded[style]
    try:
        assert_median(record, {"t": claimed})
        message = None
    except CheckFailure as failure:
        message = str(failure)
    assert (message is None) == (style in MEDIANS), (message, how_measured(record, claimed))
    if message:
        assert "expected the median" in message and "found the" in message


@pytest.mark.parametrize(
    "style",
    [
        "loop_warm",
        "median_warm",
        "warm_up_timed_and_dropped_in_turns",
        "timeit_least",
        "statistics_median",
        "jnp_median",
        "sorted_middle",
        "timeit_median",
        "median_of_loops_waited_at_their_end",
        "mean_warm",
    ],
)
def test_the_claimed_time_is_found_in_the_spans_it_came_from(recorded, style):
    record, claimed = recorded[style]
    assert how_measured(record, claimed), "no way of measuring found"
    assert not how_measured(record, claimed * 1.001)


def test_a_task_that_read_no_clock_fails_saying_what_was_expected(recorded):
    record, _ = recorded["loop_warm"]
    bare = type(record)(tuple(e for e in record.events if type(e).__name__ != "ClockRead"), ())
    with pytest.raises(CheckFailure, match="read no clock"):
        assert_warm(bare, {"t": 0.001})


def test_a_dispatch_only_time_is_not_found_divided_out_of_another_functions_waited_calls():
    """An unwaited loop's time per call, beside another function's loops whose calls were each waited for:
    the long spans divided by hundreds agree with the short claim to the match's rounding, but their waits
    count 5 calls each, so the claim comes from the unwaited spans alone, and the check of waiting fails."""
    from autograder.facts.schema import ClockRead, TimingRecord, Wait

    events, pairs, read = [], [], 0
    result = Wait("block_until_ready", (((128, 64), "float32", 8),))
    for seconds, waits in [(0.00040, 0), (0.00041, 0), (0.00039, 0), (0.0608, 5), (0.0608, 5), (0.0608, 5)]:
        start = 10.0 + read
        events.append(ClockRead(read, "perf_counter", start))
        events.extend([result] * waits)
        events.append(ClockRead(read + 1, "perf_counter", start + seconds))
        pairs.append((read, read + 1))
        read += 2
    record = TimingRecord(tuple(events), tuple(pairs))
    dispatch_only = 0.00040 / 5  # the median loop over its 5 calls, never waited for; 0.0608 / 760 exactly
    assert all(not span.waits for m in how_measured(record, dispatch_only) for span in m.spans)
    with pytest.raises(CheckFailure, match="waited for no result"):
        assert_blocked(record, {"t_single": dispatch_only})
    assert_blocked(record, {"t_sharded": 0.0608 / 5})  # each of its calls waited for: a right time


def test_a_total_divided_by_no_multiple_of_its_spans_does_not_hide_the_median():
    """Two warm-ups timed and dropped, then the median of ten calls: all twelve spans' total happens to be
    13 times that median, a division no loop gives (13 calls in 12 spans). Taken for a way of measuring, it
    covered the median's ten spans and hid the median from the check."""
    from autograder.facts.schema import ClockRead, TimingRecord

    timed = [0.0009, 0.00092, 0.00094, 0.00096, 0.00099, 0.00101, 0.00104, 0.00106, 0.00108, 0.0011]
    events, pairs, clock = [], [], 10.0
    for read, seconds in enumerate([0.0018, 0.0012, *timed]):
        events += [ClockRead(2 * read, "perf_counter", clock), ClockRead(2 * read + 1, "perf_counter", clock + seconds)]
        pairs.append((2 * read, 2 * read + 1))
        clock += 1.0
    record = TimingRecord(tuple(events), tuple(pairs))
    median = 0.001
    assert abs(0.0018 + 0.0012 + sum(timed) - 13 * median) < 1e-12
    assert all(len(m.spans) == len(timed) for m in how_measured(record, median))  # not the twelve
    assert_median(record, {"t": median})


def test_a_guessed_count_of_unwaited_calls_does_not_hide_their_median():
    """Four functions timed 30 times each, the clock stopped before each wait: the second one's median is
    claimed. All 120 spans' total happens to be 480 times that median (four calls a span, a count no wait
    fixes), and the 120 spans hold the 30. The guess may not hide the median the spans give exactly; the
    check of waiting still fails."""
    from autograder.facts.schema import ClockRead, TimingRecord, Wait

    median = 0.0001
    # an even count: the median is the mean of the middle two, 0.5 µs either side of it
    groups = [[0.0003 + 1e-6 * i for i in range(30)], [median + 1e-6 * (i - 14.5) for i in range(30)]]
    groups.append([0.0002 + 1e-6 * i for i in range(30)])
    rest = 480 * median - sum(map(sum, groups))
    groups.append([rest / 30] * 30)
    events, pairs, clock, read = [], [], 10.0, 0
    result = Wait("block_until_ready", (((128, 64), "float32", 8),))
    for seconds in [s for group in groups for s in group]:
        events += [ClockRead(read, "perf_counter", clock), ClockRead(read + 1, "perf_counter", clock + seconds), result]
        pairs.append((read, read + 1))
        read, clock = read + 2, clock + 1.0
    record = TimingRecord(tuple(events), tuple(pairs))
    spans_total = sum(stop.seconds - start.seconds for start, stop in zip(events[0::3], events[1::3]))
    assert abs(spans_total / 480 - median) < 1e-6 * median  # the coincidence is there
    assert not any(m.guessed for m in how_measured(record, median))
    assert_median(record, {"psum": median})
    with pytest.raises(CheckFailure, match="waited for no result"):
        assert_blocked(record, {"psum": median})


def _two_loops(calls: int, seconds: tuple[float, float]):
    """Two functions timed in turn, each one loop of ``calls`` calls, each call waited for."""
    from autograder.facts.schema import ClockRead, TimingRecord, Wait

    events, pairs = [], []
    result = Wait("block_until_ready", (((128, 64), "float32", 8),))
    for read, loop in ((0, seconds[0]), (2, seconds[1])):
        events += [ClockRead(read, "perf_counter", 10.0 + read), *[result] * calls]
        events.append(ClockRead(read + 1, "perf_counter", 10.0 + read + loop))
        pairs.append((read, read + 1))
    return TimingRecord(tuple(events), tuple(pairs))


@pytest.mark.parametrize("calls, passes", [(199, False), (200, True), (201, True)])
def test_a_loop_one_call_off_the_count_it_divides_by_is_judged_by_the_calls_it_waited_for(calls, passes):
    """`for _ in range(calls - 1)` with the time divided by `calls`: the waits count 199 calls, so the time is
    the loop's total over 200, measured over 199 calls, and only the count check fails. The other loop's
    199 waits do not make up the missing call; one call over the count is 201 calls, enough."""
    record = _two_loops(calls, (0.2, 0.3))
    claims = {"t_collective": 0.2 / 200, "t_gathered": 0.3 / 200}
    assert_warm(record, claims)
    assert_blocked(record, claims)
    if passes:
        assert_calls(record, claims, 200)
    else:
        with pytest.raises(CheckFailure, match=r"at least 200 timed calls; found the total divided by 200 .* 199 call"):
            assert_calls(record, claims, 200)


def test_a_count_far_from_the_waits_is_still_no_way_of_measuring():
    """A loop of 20 waited calls whose total over 200 happens to be the claim: 180 calls apart, a coincidence."""
    record = _two_loops(20, (0.2, 0.3))
    assert not how_measured(record, 0.2 / 200)
