"""The grader's side of the conversation with a kernel: nbclient's client with its output capped, output
ZeroMQ dropped noticed, and a cell past its timeout given back the time others took from it."""

from __future__ import annotations

import contextlib
import time
from queue import Empty

import zmq
from nbclient import NotebookClient
from nbclient.util import ensure_async

from autograder.fairness import LoadClock
from autograder.kernel import TRUNCATION_MARK
from autograder.run.sandbox import Limits

TIMEOUT_ENAME = "CellTimeoutError"  # the error a cell that ran out of time ends with
RECHECK_SECONDS = 5.0  # past its timeout, a cell on a crowded machine has the time it is owed read this often


def cell_error(cell) -> str | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return f"{out.get('ename')}: {out.get('evalue')}"[:2000]
    return None


class CappedClient(NotebookClient):
    def __init__(self, nb, limits: Limits, **kwargs):
        super().__init__(nb, **kwargs)
        self.limits = limits
        self.total_bytes = 0
        self.cell_bytes = 0
        self.truncated = False
        self.timed_out = False  # the last cell ran out of its time and was interrupted
        self.allowed_seconds = 0.0  # the time the last cell had, with what others took given back
        self._clock: LoadClock | None = None
        self.interrupt_after: float | None = None  # this cell's own timeout, where not the limits'
        self._msg_id: str | None = None

    def start_cell(self, interrupt_after: float | None = None) -> None:
        """``interrupt_after``: the cell's own timeout, not the limits' (the harness's start-up code)."""
        self.cell_bytes, self.truncated, self.timed_out = 0, False, False
        self.interrupt_after = interrupt_after
        own_seconds = getattr(self.km, "cpu_seconds", None)  # the harness's kernel manager reads its processes
        own_threads = getattr(self.km, "thread_times", None)
        self._clock = LoadClock(own_seconds, time.monotonic, own_threads) if own_seconds and own_threads else None

    def cell_others_share(self) -> float | None:
        return self._clock.others_share() if self._clock is not None else None

    def _get_timeout(self, cell):
        if self.interrupt_after is not None:
            return max(1, int(self.interrupt_after))
        return super()._get_timeout(cell)

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        self._msg_id = msg_id  # the reply that the time given back waits for
        return await super()._async_poll_for_reply(msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive)

    async def _async_handle_timeout(self, timeout, cell=None):
        """First wait, for the cell's reply, the time other work took from it; then interrupt it."""
        reply = await self._reply_in_time_given_back(timeout)
        if reply is not None:
            return reply
        self.timed_out = True
        return await super()._async_handle_timeout(timeout, cell)

    async def _reply_in_time_given_back(self, timeout: float):
        self.allowed_seconds = float(timeout)
        clock = self._clock
        if clock is None:
            return None
        shell = self._kernel_client().shell_channel
        while True:
            self.allowed_seconds = clock.limit_now(timeout)
            remaining = self.allowed_seconds - clock.elapsed()
            if remaining <= 0:
                return None
            try:
                msg = await ensure_async(shell.get_msg(timeout=min(remaining, RECHECK_SECONDS)))
            except Empty:
                await self._async_check_alive()  # a kernel that died meanwhile ends the run, as in nbclient
                continue
            if msg["parent_header"].get("msg_id") == self._msg_id:
                return msg

    def _kernel_client(self):
        if self.kc is None:
            raise RuntimeError("the kernel's client is not started")
        return self.kc

    def watch_output_channel(self) -> None:
        """ZeroMQ drops a message larger than the grader accepts, and the connection with it, silently."""
        self._disconnections = self._kernel_client().iopub_channel.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)

    def stop_watching_output_channel(self) -> None:
        """An open monitor socket keeps its ZeroMQ context alive: the grader would hang at exit."""
        monitor = getattr(self, "_disconnections", None)
        if monitor is None:
            return
        self._disconnections = None
        with contextlib.suppress(Exception):
            self._kernel_client().iopub_channel.socket.disable_monitor()
        monitor.close(linger=0)

    async def output_dropped(self) -> bool:
        """Was output dropped since the last call? ZeroMQ does not reconnect by itself after a drop."""
        dropped = False
        monitor = getattr(self, "_disconnections", None)
        while monitor is not None and await monitor.poll(0):
            await monitor.recv_multipart()
            dropped = True
        if dropped:
            client = self._kernel_client()
            socket, url = client.iopub_channel.socket, client._make_url("iopub")
            socket.disconnect(url)
            socket.connect(url)
        return dropped

    def output(self, outs, msg, display_id, cell_index):
        size = len(str(msg.get("content", "")))
        if TRUNCATION_MARK in str(msg.get("content", {}).get("text", "")):
            self.truncated = True
        self.cell_bytes += size
        self.total_bytes += size
        if self.cell_bytes > self.limits.output_bytes_per_cell or self.total_bytes > self.limits.output_bytes_total:
            self.truncated = True
            return None
        return super().output(outs, msg, display_id, cell_index)
