"""A submission's kernel from start to close, used once; a start that fails is the harness's fault, never the
student's (no student code has run), so ``start_kernel`` tries fresh kernels before the run ends unstarted."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.fairness import CellTurn, home_cores, kernel_not_moved, pass_the_gate
from autograder.run.kernels.client import TIMEOUT_ENAME, CappedClient, cell_error
from autograder.run.kernels.compiled_programs import KERNEL_DIR, CompiledPrograms, copy_for_kernel, leave, settings_code
from autograder.run.kernels.harness_code import WARM_UP_ENDED, WARM_UP_WAIT, copy_kernel_package, startup_code
from autograder.run.kernels.malloc import memory_decided
from autograder.run.kernels.manager import HarnessKernelManager
from autograder.run.sandbox import (
    BUBBLEWRAP,
    SCRATCH,
    SHARED_MEMORY,
    Limits,
    WriteWatch,
    bound_root,
    claim,
    disown,
    oom_kills,
    remove_root,
    sweep_once,
)

START_ATTEMPTS = 3
LOG_TAIL = 2_000  # characters of a failed kernel's log kept in the warning

log = logging.getLogger("autograder.kernel_start")


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel is made for: a pool's spare kernel serves a request whose spec it ``fits``, the lab
    probe's compared by content."""

    limits: Limits
    lab_probe: Path | None = field(default=None, compare=False)
    compiled: CompiledPrograms | None = None
    lab_probe_digest: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "limits", memory_decided(self.limits))
        if self.lab_probe is not None:
            object.__setattr__(self, "lab_probe_digest", hashlib.sha256(self.lab_probe.read_bytes()).hexdigest())


class StartedKernel:
    """A fresh sandboxed kernel in a root directory of its own, for one submission."""

    def __init__(self, spec: KernelSpec):
        self.spec = spec
        limits = self.limits = spec.limits
        self.ended_well = False  # set once the run of its notebook completed: a filling kernel's to keep
        sweep_once()  # the roots a killed grader left behind (stale_roots.py)
        self.root = Path(tempfile.mkdtemp(prefix="autograder-"))
        # what the kernel may write, in all (write_bound.py): None where its root could not be bounded
        bounded = limits.sandbox is not None and bound_root(self.root, limits.sandbox.write_bytes) is None
        self.write_bound = limits.sandbox.write_bytes if bounded and limits.sandbox else None
        try:
            os.chmod(self.root, 0o755)
            claim(self.root)
            self.workdir = self.root / "work"  # the kernel's only writable directory
            self.modules_dir = self.root / "modules"  # the modules the kernel loads, read-only to it
            self.facts_dir = self.workdir / ".facts"
            for d in (self.workdir, self.modules_dir, self.facts_dir):
                d.mkdir()
            copy_kernel_package(self.modules_dir, spec.lab_probe)
            scratch = self.root / SCRATCH  # bubblewrap's /tmp and /dev/shm, in the root: bounded with it
            self.km = HarnessKernelManager(
                self.workdir, self.root / "kernel.log", limits.sandbox, [self.modules_dir], scratch=scratch
            )
        except BaseException:
            remove_root(self.root)
            raise
        if self.km.uid is not None:
            os.chown(self.facts_dir, self.km.uid, self.km.uid)
        self.write_watch: WriteWatch | None = None  # where no tmpfs bounds what it writes (write_bound.py)
        self.state = "new"  # then "starting", then "started" once the startup code has run
        self.failure: str | None = None  # why the startup code failed, if it did
        self.waited = 0.0  # how long the submission that claimed it waited for it, in seconds
        self.turn = CellTurn()  # its code waits while another grading's timed task holds the machine
        self.turn.processes = self.km.process_ids  # or runs moved onto the cores no turn holds
        self.warm_up_hold: asyncio.Task | None = None  # the lab probe's warm-up, held like a cell until it ends
        self.start_ended = asyncio.Event()  # started, failed to, or closed
        self.nb = nbformat.v4.new_notebook()
        self.client = CappedClient(
            self.nb,
            limits,
            km=self.km,
            timeout=int(limits.cell_timeout),
            allow_errors=True,
            interrupt_on_timeout=True,
            iopub_timeout=10,
            raise_on_iopub_timeout=False,
            startup_timeout=int(limits.startup_timeout),
            error_on_timeout={
                "ename": TIMEOUT_ENAME,
                "evalue": f"the cell ran longer than {limits.cell_timeout:g} s",
                "traceback": [],
            },
        )

    def fits(self, spec: KernelSpec) -> bool:
        return spec == self.spec

    async def start(self, cores: tuple[int, ...] | None = None) -> None:
        """The harness's processes are noted once it has started: any other found later is student code's."""
        self.state = "starting"
        try:
            await asyncio.wait_for(self.km.start(), self.limits.startup_timeout)
            if not self.turn.move(cores or home_cores()):  # at once: its imports run where it was put
                kernel_not_moved()
            await self.client.async_start_new_kernel_client()
            self.client.watch_output_channel()
            ended = self.facts_dir / WARM_UP_ENDED if self.spec.lab_probe is not None else None
            startup = startup_code(
                str(self.modules_dir),
                ended is not None,  # with the lab's probe
                self.limits.output_bytes_total,
                str(ended) if ended else None,
                self._compilation_settings(),
                self.limits.saves_memory is not False,  # decided by its spec; unknown: saved
            )
            cell = await self.run_code(
                startup, self.limits.startup_timeout, warm_up_ended=ended, interrupt_after=self.limits.startup_timeout
            )
            self.failure = cell_error(cell)
            if self.failure is None:
                self.km.note_harness_processes()
                self._watch_writes()
            self.state = "started"
        finally:
            if self.failure is not None or self.state != "started":  # no warm-up runs
                self._let_warm_up_go()
            self.start_ended.set()

    def _watch_writes(self) -> None:
        """Where no tmpfs bounds it all: its root where that is no tmpfs, the machine's /dev/shm at the uid level."""
        sandbox = self.limits.sandbox
        if sandbox is None or (self.write_bound is not None and self.km.level == BUBBLEWRAP):
            return
        shared = [] if self.km.level == BUBBLEWRAP else [SHARED_MEMORY]
        self.write_watch = WriteWatch(self.root, shared, self.km.uid, sandbox.write_bytes, self.km.stop_all_processes)

    async def problem(self) -> str | None:
        """Why this started kernel cannot run a notebook, or None."""
        if self.failure is not None:
            return f"the device setup failed: {self.failure}"
        if self.state != "started" or self.client.kc is None:
            return "the kernel's client did not start"
        if not await self.km.is_alive():
            return "the kernel died after it had started, before the first cell"
        return None

    async def ready(self, timeout: float = 15) -> bool:
        try:
            return await self.problem() is None and cell_error(await self.run_code("pass", timeout)) is None
        except Exception:  # it died, or does not answer
            return False

    async def run_code(
        self, source: str, timeout: float, warm_up_ended: Path | None = None, interrupt_after: float | None = None
    ) -> nbformat.NotebookNode:
        """Code as a cell, interrupted past the cell timeout (or ``interrupt_after``); ``TimeoutError`` past
        ``timeout``. With ``warm_up_ended``, the warm-up it starts is held like a cell until that file appears."""
        cell = nbformat.v4.new_code_cell(source)
        async with self.turn:  # the wait, if any, is before the timeout starts
            if warm_up_ended is not None:
                hold = self.turn.hold_beyond()  # taken inside the cell's hold: no timed task slips between
                if hold.held:
                    self.warm_up_hold = asyncio.get_running_loop().create_task(
                        hold.release_when(warm_up_ended.exists, WARM_UP_WAIT)
                    )
            self.nb.cells.append(cell)
            self.client.start_cell(interrupt_after)
            await asyncio.wait_for(self.client.async_execute_cell(cell, len(self.nb.cells) - 1), timeout)
        return cell

    def _compilation_settings(self) -> str:
        compiled = self.spec.compiled
        if compiled is None:
            return ""
        if compiled.fill:
            return settings_code(self.workdir / KERNEL_DIR, writes=True)
        if copy_for_kernel(compiled.folder, self.workdir):
            return settings_code(self.workdir / KERNEL_DIR, writes=False)
        return ""

    def _let_warm_up_go(self) -> None:
        if self.warm_up_hold is not None:
            self.warm_up_hold.cancel()  # release_when lets go of the hold as it ends

    async def close(self) -> None:
        self._let_warm_up_go()
        self.start_ended.set()
        if self.write_watch is not None:
            self.write_watch.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.km.shutdown_kernel(now=True), 20)
        if self.client.kc is not None:
            self.client.stop_watching_output_channel()
            self.client.kc.stop_channels()
        # and no warm-up was compiling when it stopped (it could have left an entry cut short)
        warm_up_ended = self.spec.lab_probe is None or (self.facts_dir / WARM_UP_ENDED).exists()
        compiled = self.spec.compiled
        if compiled is not None and compiled.fill and self.ended_well and warm_up_ended:
            await asyncio.to_thread(leave, self.workdir, compiled.folder)
        if os.environ.get("AUTOGRADER_KEEP_RUNS"):
            # to the process's own stderr: the graders, still checking in another thread, may hold
            # sys.stdout redirected into their log
            print(f"kept {self.root}", file=sys.__stderr__, flush=True)
            disown(self.root)
        else:
            remove_root(self.root)


@dataclass(frozen=True)
class KernelStart:
    kernel: StartedKernel | None  # started and alive; None when every attempt failed
    failures: tuple[str, ...] = ()  # why each failed attempt failed, in order

    @property
    def reason(self) -> str:
        return f"the kernel failed to start {len(self.failures)} times ({'; '.join(dict.fromkeys(self.failures))})"


async def start_kernel(
    spec: KernelSpec, kernel: StartedKernel | None = None, owner: int | None = None, attempts: int = START_ATTEMPTS
) -> KernelStart:
    """Start ``kernel`` (a pool's, already started, is only checked) or one for ``spec``, and fresh ones while
    starting fails; ``owner`` is the run each serves. A cancelled start shuts its kernel down."""
    failures: list[str] = []
    for attempt in range(1, attempts + 1):
        kernel = kernel or StartedKernel(spec)
        kernel.turn.owner = owner
        kills_before = oom_kills()
        try:
            why = await _start_once(kernel, spec.limits)
        except BaseException:
            await kernel.close()
            raise
        if why is not None and kills_before is not None and (oom_kills() or 0) > kills_before:
            why += " (the out-of-memory killer struck meanwhile: kernels are its first choice)"
        if why is None:
            return KernelStart(kernel, tuple(failures))
        failures.append(why)
        again = "; starting a fresh kernel" if attempt < attempts else "; giving up"
        log.warning("the kernel failed to start (attempt %d of %d): %s%s", attempt, attempts, why, again)
        tail = kernel.km.log_tail(LOG_TAIL).strip()
        if tail:
            log.warning("its log ended with:\n%s", tail)
        await kernel.close()
        kernel = None
    return KernelStart(None, tuple(failures))


async def _start_once(kernel: StartedKernel, limits: Limits) -> str | None:
    try:
        if kernel.state == "new":
            cores = await pass_the_gate()  # not where another grading times code; no timeout counts a wait
            # each step of a start has its own timeout; this bounds the whole of it
            await asyncio.wait_for(kernel.start(cores), 3 * limits.startup_timeout)
        return await kernel.problem()
    except TimeoutError:
        return f"the kernel did not start within {3 * limits.startup_timeout:g} s"
    except Exception as exc:  # jupyter_client's RuntimeErrors, ZeroMQ's errors, a dead kernel's
        return f"{type(exc).__name__}: {exc}"
