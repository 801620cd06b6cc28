"""Warm kernels for a process that grades one submission after another (a batch's Dask worker): while one
is graded the pool starts the next, off the next submission's critical path. jupyter_client's managers and
ZeroMQ's sockets belong to the event loop they were made on, so the pool owns one loop, on its own thread."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import threading
import time
from dataclasses import replace

from autograder.fairness import pass_the_gate
from autograder.run.execute import Executor, RunRequest, execute_plan_async
from autograder.run.execution import Execution, LiveExecution
from autograder.run.kernels import KernelSpec, StartedKernel

CLOSE_TIMEOUT = 120.0


class KernelPool:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="autograder-kernels", daemon=True)
        self._thread.start()
        self._spare: tuple[StartedKernel, asyncio.Task] | None = None
        self._closed = False
        self._lock = threading.Lock()
        atexit.register(self.close)

    def execute(self, request: RunRequest, live: LiveExecution | None = None, *, start_next: bool = True) -> Execution:
        """``execute_plan`` in the spare kernel when it fits and is ready, then the next one started unless
        ``start_next`` is False: none is expected, and a spare would only take the core from this one."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the kernel pool is closed")
            future = asyncio.run_coroutine_threadsafe(self._execute(request, live, start_next), self._loop)
        return future.result()

    def executor(self, start_next: bool = True) -> Executor:
        return functools.partial(self.execute, start_next=start_next)

    async def _execute(self, request: RunRequest, live: LiveExecution | None, start_next: bool) -> Execution:
        spec = request.kernel
        asked = time.monotonic()
        kernel = await self._claim(spec)
        if kernel is None:  # started by the execution, as execute_plan does
            kernel = StartedKernel(spec)
        else:
            kernel.waited = time.monotonic() - asked
        if start_next:  # for a submission like this one; a run of the solution fills the lab's folder once
            compiled = replace(spec.compiled, fill=False) if spec.compiled else None
            self._warm(replace(spec, compiled=compiled), after=kernel)
        return await execute_plan_async(request, live, kernel)

    async def _claim(self, spec: KernelSpec) -> StartedKernel | None:
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        kernel, starting = spare
        if kernel.fits(spec):
            with contextlib.suppress(Exception):
                await starting
            if await kernel.ready():
                return kernel
        await _discard(kernel, starting)
        return None

    def _warm(self, spec: KernelSpec, after: StartedKernel | None) -> None:
        """Once ``after`` has started: two starts at once would slow the submission waiting for the first."""
        if self._spare is not None:
            return
        try:
            kernel = StartedKernel(spec)
        except Exception:  # e.g. no uid left: the next submission gets a kernel started for it
            return
        self._spare = (kernel, self._loop.create_task(_start_after(kernel, after)))

    def prepare(self, spec: KernelSpec) -> None:
        """Start a spare now, so that the first submission does not wait for a kernel's start either."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the kernel pool is closed")
            self._loop.call_soon_threadsafe(self._warm, spec, None)

    async def spare(self) -> StartedKernel | None:
        """The spare kernel once its start has ended (for tests)."""
        if self._spare is None:
            return None
        with contextlib.suppress(Exception):
            await self._spare[1]
        return self._spare[0]

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        atexit.unregister(self.close)
        try:
            asyncio.run_coroutine_threadsafe(self._shut_down(), self._loop).result(CLOSE_TIMEOUT)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CLOSE_TIMEOUT)
            if not self._thread.is_alive():
                self._loop.close()

    async def _shut_down(self) -> None:
        spare, self._spare = self._spare, None
        running = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)  # executions close their kernels
        if spare is not None:
            await _discard(*spare)


async def _start_after(kernel: StartedKernel, first: StartedKernel | None) -> None:
    if first is not None:
        await first.start_ended.wait()
    cores = await pass_the_gate(noted=False)  # not where another grading times code; a spare's wait is nobody's
    await kernel.start(cores)


async def _discard(kernel: StartedKernel, starting: asyncio.Task) -> None:
    starting.cancel()
    with contextlib.suppress(BaseException):
        await starting
    await kernel.close()


_worker_pool: KernelPool | None = None
_worker_pool_lock = threading.Lock()


def worker_pool() -> KernelPool:
    global _worker_pool
    with _worker_pool_lock:
        if _worker_pool is None:
            _worker_pool = KernelPool()
        return _worker_pool


def close_worker_pool() -> None:
    global _worker_pool
    with _worker_pool_lock:
        pool, _worker_pool = _worker_pool, None
    if pool is not None:
        pool.close()
