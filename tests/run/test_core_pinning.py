"""Grading processes pinned to cores of their own (autograder/fairness/core_pinning.py): where the machine has a
core for each, each process runs on one core; else, or when switched off, they share every core."""

from __future__ import annotations

import os

import pytest

from autograder.fairness.core_pinning import PIN_VARIABLE, cores_to_pin, pinned_process_pool, process_cores


def _cores_seen(workers: int) -> list[frozenset[int]]:
    with pinned_process_pool(workers) as pool:
        return [frozenset(cores) for cores in pool.map(os.sched_getaffinity, [0] * 8)]


def test_as_many_cores_as_workers_where_there_is_one_for_each(monkeypatch):
    monkeypatch.delenv(PIN_VARIABLE, raising=False)
    cores = process_cores()
    assert cores_to_pin(len(cores)) == cores
    assert cores_to_pin(len(cores) + 1) == ()
    monkeypatch.setenv(PIN_VARIABLE, "off")
    assert cores_to_pin(1) == ()


@pytest.mark.skipif(len(process_cores()) < 2, reason="one core: nothing to pin apart")
def test_each_process_of_the_pool_runs_on_one_core_of_this_process(monkeypatch):
    monkeypatch.delenv(PIN_VARIABLE, raising=False)
    seen = _cores_seen(2)
    assert all(len(cores) == 1 and cores <= set(process_cores()) for cores in seen), seen


def test_switched_off_or_too_many_workers_the_processes_share_every_core(monkeypatch):
    every = frozenset(process_cores())
    assert set(_cores_seen(len(every) + 1)) == {every}
    monkeypatch.setenv(PIN_VARIABLE, "off")
    assert set(_cores_seen(1)) == {every}
