"""What one run is asked to do (``RunRequest``), and its headless execution in a fresh kernel, each task's facts
taken out of the kernel's reach at once; whether the kernel saves memory is decided here, on the machine that
runs it. Imports no JAX: a grade starts its kernel first, then imports JAX while the kernel starts."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from nbclient.exceptions import DeadKernelError

from autograder.facts import TakenFacts, TaskCapture, task_seed
from autograder.fairness import (
    MOST_SHARE,
    LoadClock,
    TimedTurn,
    not_running,
    stretch,
    student_code_running,
    until_machine_quiet,
)
from autograder.run.execution import CellOutcome, CellStatus, Execution, LiveExecution, RunStatus
from autograder.run.kernels import (
    AFTER_TIMED_TASK_CODE,
    REAP_CHILDREN_CODE,
    TIMEOUT_ENAME,
    WARM_UP_WAIT,
    CompiledPrograms,
    KernelSpec,
    StartedKernel,
    before_timed_cell_code,
    cell_error,
    memory_decided,
    recorder_code,
    start_kernel,
)
from autograder.run.phase_clock import CAPTURE, CELLS, KERNEL_START, TURN_WAIT, PhaseClock
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox import (
    BOUND_WORDS,
    MIB,
    Limits,
    claim,
    explain_write_error,
    memory_limit_bytes,
    oom_kills,
    out_of_memory_words,
)

Captures = Mapping[str, TaskCapture] | Callable[[], Mapping[str, TaskCapture]]


@dataclass(frozen=True)
class RunRequest:
    """``captures`` may be a function returning them, called once the kernel is starting; a copy of
    ``submission`` is put in the kernel's working directory."""

    plan: Plan
    captures: Captures
    limits: Limits
    seed: int
    lab_probe: Path | None = None
    submission: Path | None = None
    compiled: CompiledPrograms | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "limits", memory_decided(self.limits))

    @property
    def kernel(self) -> KernelSpec:
        return KernelSpec(self.limits, self.lab_probe, self.compiled)


class Executor(Protocol):
    """``execute_plan``, or a batch worker's ``KernelPool.execute``; with ``live``, a grader follows the run."""

    def __call__(self, request: RunRequest, live: LiveExecution | None = None) -> Execution: ...


# What the kernel's log says when it died, and the reason a result gives, first match first.
DEATH_SIGNS = (
    (
        ("rendezvous", "Expected 8 threads to join"),
        "the kernel was aborted by XLA: a jitted program with collectives was started while another was still "
        "running (call jax.block_until_ready on each step of a loop)",
    ),
    (("MemoryError", "RESOURCE_EXHAUSTED"), "the kernel died: it ran out of memory"),
    (("Segmentation fault",), "the kernel died: it crashed (segmentation fault)"),
)


class _Hung(Exception):
    """A cell that neither finished nor stopped when interrupted."""


class _Run:
    def __init__(self, request: RunRequest, live: LiveExecution | None):
        self.plan, self.limits, self.seed = request.plan, request.limits, request.seed
        self._captures: Captures = request.captures
        submission = self.submission = request.submission
        self.live = live
        self.timed_turn = TimedTurn(id(self), submission.name if submission else "")  # before the first timed cell
        self.interrupted: str | None = None  # the last cell that had to be interrupted
        self.timing_malloc = False  # the kernel's malloc keeps large blocks for a timed task (run/kernels/malloc.py)
        self.taken = TakenFacts(Path(tempfile.mkdtemp(prefix="autograder-facts-")))  # outside the kernel's view
        claim(self.taken.directory)  # removed by a later grader should this one be killed (stale_roots.py)
        self.cells: list[CellOutcome] = []
        self.phases = PhaseClock()
        if live is not None:
            live.timed_turn = self.timed_turn  # released by the grader once it has measured
            live.started(self.taken, self.cells)

    def attach(self, kernel: StartedKernel) -> None:
        self.kernel: StartedKernel = kernel
        self.km, self.client, self.facts_dir = kernel.km, kernel.client, kernel.facts_dir
        submission = self.submission
        if submission is not None and not (kernel.workdir / submission.name).exists():  # not a harness file
            shutil.copyfile(submission, kernel.workdir / submission.name)

    async def run_steps(self) -> None:
        async with self.client.async_setup_kernel():
            with student_code_running():
                self.kernel.turn.running = True
                try:
                    for step in self.plan.steps:
                        if isinstance(step, CaptureTask):
                            await self.end_timing()
                            await self.capture(step.task)
                            continue
                        timed = self.times_code(step.task)
                        if timed:
                            with not_running():  # waiting, it runs nothing: another grader may measure
                                await self.timed_turn.acquire(step.label, self.kernel.turn.movable)
                            with self.phases.timed(TURN_WAIT):
                                await self.until_idle(step.label, str(step.task))
                        if await self.run_cell(step, timed):  # interrupted: does it answer again?
                            await self.run_or_hang("pass", 15, step.label)
                finally:
                    self.kernel.turn.running = False

    @property
    def waited(self) -> float:
        """Seconds waited for other gradings' timed tasks: no timeout counts them."""
        kernel = getattr(self, "kernel", None)  # none before ``attach``
        return (kernel.turn.waited if kernel is not None else 0.0) + self.timed_turn.waited

    async def until_idle(self, label: str, task: str) -> None:
        """Before a timed cell: the grader and the kernel's warm-up idle, malloc keeping large blocks as the
        grader's does when it measures, then, briefly, a quiet machine (what no turn stops)."""
        if self.live is not None:
            await self.live.until_grader_idle()
        code = before_timed_cell_code(task, self.limits.saves_memory is not False)
        await self.run_or_hang(code, WARM_UP_WAIT + 30, label)
        self.timing_malloc = True
        await until_machine_quiet(label)

    async def end_timing(self) -> None:
        if self.timing_malloc and self.limits.saves_memory is not False:
            self.timing_malloc = False
            await self.run_or_hang(AFTER_TIMED_TASK_CODE, 30, "the end of a timed task")

    async def run_or_hang(self, source: str, timeout: float, label: str):
        """``run_code``, a kernel still running it past ``timeout`` being hung (``_Hung``, at ``label``)."""
        try:
            return await self.kernel.run_code(source, timeout)
        except TimeoutError:
            raise _Hung(label) from None

    @property
    def cell_bound(self) -> float:
        """Past its timeout, the most time others' work can have given back and the interrupt's grace, a
        kernel counts as hung."""
        return self.limits.cell_timeout * stretch(MOST_SHARE) + 30

    def times_code(self, task: str | None) -> bool:
        capture = self.captures.get(task) if task else None
        return capture is not None and capture.times_code

    @property
    def captures(self) -> Mapping[str, TaskCapture]:
        """Asked for when first needed: a lab's may import JAX."""
        if callable(self._captures):
            self._captures = self._captures()
        return self._captures

    async def run_cell(self, step: RunCell, timed: bool = False) -> bool:
        """One cell; a ``timed`` one with others' load meanwhile read, which the timing checks allow for."""
        started, waited = time.monotonic(), self.kernel.turn.waited
        self.kernel.turn.timing = timed
        try:
            cell = await self.run_or_hang(step.source, self.cell_bound, step.label)
        finally:
            self.kernel.turn.timing = False
        share = self.client.cell_others_share() if timed else None
        error = explain_write_error(cell_error(cell), self.kernel.write_bound)  # the bound it hit, named
        seconds = time.monotonic() - started - (self.kernel.turn.waited - waited)
        if self.client.timed_out:  # nbclient interrupted it: the error shown is the interrupt's
            error = f"{TIMEOUT_ENAME}: the cell ran longer than {self._allowed()} and was interrupted"
        timed_out = bool(error and error.startswith(TIMEOUT_ENAME))
        status = CellStatus.TIMEOUT if timed_out else CellStatus.ERROR if error else CellStatus.OK
        self.interrupted = step.label if timed_out else None
        truncated = await self.client.output_dropped() or self.client.truncated
        leftovers = await self.stop_leftovers()
        self.cells.append(
            CellOutcome(step.label, step.origin, step.task, status, error, seconds, truncated, leftovers, share)
        )
        self.phases.add(CELLS, seconds)
        return timed_out

    def _allowed(self) -> str:
        """``120 s``, or ``120 s (300 s with the time other work took from it given back)``."""
        given, limit = self.client.allowed_seconds, f"{self.limits.cell_timeout:g} s"
        if given <= self.limits.cell_timeout * 1.01:
            return limit
        return f"{limit} ({round(given, 1):g} s with the time other work took from it given back)"

    async def stop_leftovers(self) -> int:
        """Before anything else runs or is read; the kernel reaps its own, freeing the process limit."""
        stopped = self.km.stop_leftover_processes()
        if stopped:
            await self.kernel.run_code(REAP_CHILDREN_CODE, 30)
        return stopped

    async def capture(self, task: str) -> None:
        with self.phases.timed(CAPTURE):
            capture, out = self.captures.get(task, TaskCapture(task)), self.facts_dir / task
            manifest = capture.manifest(str(out), task_seed(self.seed, task))
            cell = await self.kernel.run_code(recorder_code(manifest), self.cell_bound)
            await self.stop_leftovers()  # the grader's calls of student functions may have started some
            self.taken.take(task, out, _capture_problem(cell_error(cell)))
            shutil.rmtree(out, ignore_errors=True)
        if self.live is not None:
            self.live.task_taken()

    def died_reason(self) -> str:
        watch = self.kernel.write_watch
        if watch is not None and watch.passed:
            return f"the kernel was stopped: it wrote more than {watch.bound / MIB:g} MiB ({BOUND_WORDS})"
        log = self.km.log_tail()
        signs = (words for signs, words in DEATH_SIGNS if any(sign in log for sign in signs))
        return next(signs, "the kernel died (it exited or was killed)")


def _capture_problem(error: str | None) -> str:
    if error is None:
        return ""
    if "can't start new thread" in error or "Resource temporarily unavailable" in error:
        return (
            f" (the kernel could not start a thread to record them: {error}; the notebook's own processes"
            " or threads had used up the sandbox's process limit)"
        )
    return f" ({error})"


def _current_label(run: _Run) -> str | None:
    executed = len(run.cells)
    cells = [s for s in run.plan.steps if isinstance(s, RunCell)]
    return cells[executed].label if executed < len(cells) else None


async def execute_plan_async(
    request: RunRequest, live: LiveExecution | None = None, kernel: StartedKernel | None = None
) -> Execution:
    """With ``live``, a grader in another thread follows the run. ``kernel``: one started ahead for this
    request's spec (none: one is started here); it is shut down after."""
    limits = request.limits
    started = time.monotonic() - (kernel.waited if kernel is not None else 0.0)
    try:
        if kernel is not None and not kernel.fits(request.kernel):
            raise ValueError("the kernel given was started for other limits, lab probe or compiled programs")
        run = _Run(request, live)
    except BaseException:
        if kernel is not None:
            await kernel.close()
        raise
    status, ended_at = RunStatus.KERNEL_FAILED_TO_START, None
    reason: str | None = "the run stopped unexpectedly"
    start = None
    kills_before = oom_kills()
    try:
        asked = time.monotonic()
        start = await start_kernel(request.kernel, kernel, owner=id(run))
        run.phases.add(KERNEL_START, time.monotonic() - asked + (kernel.waited if kernel is not None else 0.0))
        if start.kernel is None:
            reason = start.reason
        else:
            run.attach(start.kernel)
            await _within_deadline(run, limits.total_timeout)
            status, reason = RunStatus.COMPLETED, None
    except TimeoutError:
        status, ended_at = RunStatus.TIMEOUT, _current_label(run)
        reason = f"the notebook ran longer than {limits.total_timeout:g} s in total"
    except (_Hung, DeadKernelError) as exc:
        # hung; or dead after an interrupt: it died of it, or stopped answering after it
        hung = str(exc) if isinstance(exc, _Hung) else run.interrupted
        if hung:
            status, ended_at = RunStatus.TIMEOUT, hung
            reason = f"{hung} did not stop when interrupted after {limits.cell_timeout:g} s"
        else:
            status, reason, ended_at = RunStatus.KERNEL_DIED, run.died_reason(), _current_label(run)
            if kills_before is not None and (oom_kills() or 0) > kills_before:  # the container's limit
                reason = out_of_memory_words(ended_at, memory_limit_bytes())
    except RuntimeError as exc:  # the client lost a started kernel: the run ends where it was, points kept
        status, reason, ended_at = RunStatus.KERNEL_DIED, f"the grader lost the kernel: {exc}", _current_label(run)
    finally:
        if live is None:
            run.timed_turn.release()  # no grader follows the run to measure under it
        else:
            live.ended(status, reason, ended_at)
        if start is not None and start.kernel is not None:
            start.kernel.ended_well = status == RunStatus.COMPLETED
            await start.kernel.close()
        seconds = time.monotonic() - started
        # Off the event loop: reading takes the parser's lock, which a grader holds while it waits for the
        # machine's turn; the loop meanwhile lets go of what its spare kernel holds (timed_turns.py).
        facts, fact_errors = await asyncio.to_thread(run.taken.read_all)
        shutil.rmtree(run.taken.directory, ignore_errors=True)
    cut_by = next((task for task in run.taken.order if task in facts and facts[task].output_cut), None)
    failures = start.failures if start is not None else ()
    run.phases.add(TURN_WAIT, run.waited)
    return Execution(
        status,
        reason,
        ended_at,
        facts,
        fact_errors,
        tuple(run.cells),
        seconds,
        request.plan.changes,
        cut_by,
        failures,
        run.phases.read(),
    )


async def _within_deadline(run: _Run, total_timeout: float):
    """``run.run_steps()``, cancelled (``TimeoutError``) past ``total_timeout`` seconds, not counting its waits
    for other gradings' timed tasks nor the time other work took from its kernel."""
    task = asyncio.ensure_future(run.run_steps())
    clock = LoadClock(run.km.cpu_seconds, time.monotonic, run.km.thread_times)
    while (remaining := clock.remaining(total_timeout) + run.waited) > 0:
        done, _ = await asyncio.wait({task}, timeout=remaining)
        if done:
            return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    raise TimeoutError


def execute_plan(request: RunRequest, live: LiveExecution | None = None) -> Execution:
    return asyncio.run(execute_plan_async(request, live))
