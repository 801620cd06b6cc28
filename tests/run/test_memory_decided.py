"""Whether a student's kernel saves memory is decided by the machine that runs it (run/kernels/malloc.py):
saved where a kernel has less room than ``KEPT_BLOCKS_ROOM`` — a container such as Gradescope's 768 MB, a
sandbox's memory limit, a machine's memory shared by a kernel per core — or where the room cannot be told;
large blocks kept where there is room; a choice the limits state is never changed."""

from dataclasses import replace

import pytest

from autograder.run.kernels import KernelSpec
from autograder.run.kernels import malloc as kernel_malloc
from autograder.run.kernels.malloc import KEPT_BLOCKS_ROOM, available_bytes, memory_decided, room_per_kernel
from autograder.run.sandbox.limits import GIB, MIB, Limits, ResourceLimits

ROOMY = 24 * GIB


def _machine(monkeypatch, limit, available, cores):
    monkeypatch.setattr(kernel_malloc, "memory_limit_bytes", lambda: limit)
    monkeypatch.setattr(kernel_malloc, "available_bytes", lambda: available)
    monkeypatch.setattr(kernel_malloc, "process_cores", lambda: tuple(range(cores)))


def test_room_is_the_smaller_of_the_container_and_the_machine_shared_by_the_kernels():
    assert room_per_kernel(768 * MIB, 20 * GIB, 1) == 768 * MIB
    assert room_per_kernel(None, 20 * GIB, 2) == 10 * GIB
    assert room_per_kernel(8 * GIB, None, 4) == 2 * GIB
    assert room_per_kernel(None, None, 2) is None


@pytest.mark.parametrize(
    ("limit", "available", "cores", "saves"),
    [
        (768 * MIB, ROOMY, 1, True),  # Gradescope's default container
        (None, ROOMY, 2, False),  # a 2-core, 24 GiB machine: large blocks kept
        (None, 16 * GIB, 8, True),  # 2 GiB a kernel when each core runs one
        (None, None, 2, True),  # nothing readable: memory saved
    ],
    ids=["gradescope", "roomy machine", "many cores, little memory each", "unknown"],
)
def test_a_kernel_saves_memory_only_where_it_is_short(monkeypatch, limit, available, cores, saves):
    _machine(monkeypatch, limit, available, cores)
    assert memory_decided(Limits()).saves_memory is saves


def test_a_sandbox_with_less_memory_than_the_room_saves_it(monkeypatch):
    _machine(monkeypatch, None, ROOMY, 2)
    small = replace(Limits(), sandbox=ResourceLimits(memory_bytes=KEPT_BLOCKS_ROOM - GIB))
    assert memory_decided(small).saves_memory is True
    assert memory_decided(replace(Limits(), sandbox=None)).saves_memory is False


def test_a_stated_choice_is_kept_and_a_kernel_spec_is_decided(monkeypatch):
    _machine(monkeypatch, 768 * MIB, ROOMY, 1)
    assert memory_decided(replace(Limits(), saves_memory=False)).saves_memory is False
    assert KernelSpec(Limits()).limits.saves_memory is True
    _machine(monkeypatch, None, ROOMY, 2)
    assert memory_decided(replace(Limits(), saves_memory=True)).saves_memory is True
    assert KernelSpec(Limits()).limits.saves_memory is False


def test_available_memory_is_read_from_meminfo(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   2000000 kB\n")
    assert available_bytes(meminfo) == 2000000 * 1024
    meminfo.write_text("MemTotal:       24000000 kB\n")
    assert available_bytes(meminfo) is None
    assert available_bytes(tmp_path / "absent") is None
