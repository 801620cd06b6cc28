"""Talking to the kernel: nbclient's client, keeping a bounded amount of a cell's output and noticing
output ZeroMQ dropped on the way, and how a cell's error (a timeout's included) is read.

Apart from the kernel's process (kernel_manager.py): this is the grader's side of the conversation.
"""

from __future__ import annotations

import zmq
from nbclient import NotebookClient

from autograder.run.kernel_housekeeping import TRUNCATION_MARK
from autograder.run.limits import Limits

TIMEOUT_ENAME = "CellTimeoutError"  # the error a cell that ran out of time ends with


def cell_error(cell) -> str | None:
    """The error a cell ended with, as ``Name: message``, or None."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return f"{out.get('ename')}: {out.get('evalue')}"[:2000]
    return None


class CappedClient(NotebookClient):
    """nbclient's client, keeping at most a fixed amount of output per cell and in total."""

    def __init__(self, nb, limits: Limits, **kwargs):
        super().__init__(nb, **kwargs)
        self.limits = limits
        self.total_bytes = 0
        self.cell_bytes = 0
        self.truncated = False

    def start_cell(self) -> None:
        self.cell_bytes, self.truncated = 0, False

    def _kernel_client(self):
        """The client of the started kernel; the output channel is watched only once there is one."""
        if self.kc is None:
            raise RuntimeError("the kernel's client is not started")
        return self.kc

    def watch_output_channel(self) -> None:
        """Watch the kernel's output channel for disconnections: ZeroMQ drops a message larger than
        the grader accepts (and the connection with it) without a word, so the output was cut there."""
        self._disconnections = self._kernel_client().iopub_channel.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)

    def stop_watching_output_channel(self) -> None:
        """Close the monitor socket: an open one keeps its ZeroMQ context from terminating, and the
        grader's process hangs at exit when the context is collected."""
        monitor = getattr(self, "_disconnections", None)
        if monitor is None:
            return
        self._disconnections = None
        try:
            self._kernel_client().iopub_channel.socket.disable_monitor()
        except Exception:
            pass
        monitor.close(linger=0)

    async def output_dropped(self) -> bool:
        """Did the output channel drop its connection since the last call (output lost on the way)?
        ZeroMQ does not connect again after such a drop, so the channel is connected anew here."""
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
