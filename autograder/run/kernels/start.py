"""Starting a submission's kernel, and a fresh one when that fails (``START_ATTEMPTS`` in all, each failure
logged with the tail of its log): no student code has run yet, so a failed start is the harness's fault,
never the student's, and a run whose every attempt failed ends as ``KERNEL_FAILED_TO_START``."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from autograder.fairness import pass_the_gate
from autograder.run.kernels.lifecycle import KernelSpec, StartedKernel
from autograder.run.sandbox import Limits, oom_kills

START_ATTEMPTS = 3
LOG_TAIL = 2_000  # characters of a failed kernel's log kept in the warning

log = logging.getLogger("autograder.kernel_start")


@dataclass(frozen=True)
class KernelStart:
    kernel: StartedKernel | None  # started and alive; None when every attempt failed
    failures: tuple[str, ...] = ()  # why each failed attempt failed, in order


async def start_kernel(
    spec: KernelSpec,
    kernel: StartedKernel | None = None,
    owner: int | None = None,
    attempts: int = START_ATTEMPTS,
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
        if kernel.failure is not None:
            return f"the device setup failed: {kernel.failure}"
        if kernel.state != "started" or kernel.client.kc is None:
            return "the kernel's client did not start"
        if not await kernel.km.is_alive():
            return "the kernel died after it had started, before the first cell"
    except TimeoutError:
        return f"the kernel did not start within {3 * limits.startup_timeout:g} s"
    except Exception as exc:  # jupyter_client's RuntimeErrors, ZeroMQ's errors, a dead kernel's
        return f"{type(exc).__name__}: {exc}"
    return None


def not_started_reason(failures: tuple[str, ...]) -> str:
    distinct = list(dict.fromkeys(failures))
    return f"the kernel failed to start {len(failures)} times ({'; '.join(distinct)})"
