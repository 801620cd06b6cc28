"""The phase clock: seconds per phase added from several threads, timed blocks, a grade's rounding."""

import threading
import time

from autograder.run.phase_clock import CELLS, CHECKS, KERNEL_START, MEASURE, PhaseClock, rounded_phases


def test_phases_add_up_from_several_threads_and_reset_empties_them():
    clock = PhaseClock()
    threads = [threading.Thread(target=lambda: [clock.add(CELLS, 0.001) for _ in range(100)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    clock.add(CELLS, -5.0)  # a negative span (a clock read out of order) adds nothing
    assert abs(clock.read()[CELLS] - 0.4) < 1e-9
    clock.reset()
    assert clock.read() == {}


def test_a_timed_block_counts_its_span_even_when_it_raises():
    clock = PhaseClock()
    try:
        with clock.timed(MEASURE):
            time.sleep(0.05)
            raise ValueError("the measurement failed")
    except ValueError:
        pass
    assert 0.05 <= clock.read()[MEASURE] < 1.0


def test_a_grade_keeps_its_phases_in_order_to_the_millisecond():
    assert list(rounded_phases({CHECKS: 1.23456, KERNEL_START: 2.0004, "other": 1.0})) == [KERNEL_START, CHECKS]
    assert rounded_phases({CHECKS: 1.23456}) == {CHECKS: 1.235}
