"""The notebook's handle on the checker process (``task_checker.py``): started on first use, kept alive
between self-checks (so its references stay computed), started again when it has died."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from autograder.paths import PACKAGE_DIR
from autograder.run import kernel_environment

LOG_TAIL_CHARS = 2000
FOLDER_PREFIX = "autograder-checker-"  # a checker's working folder, which it removes itself if orphaned


class CheckerError(RuntimeError):
    """The checker process died, or did not answer in time."""


def checker_environment() -> dict[str, str]:
    """The harness's environment (none of the notebook's XLA or JAX settings), this ``autograder`` importable."""
    env = kernel_environment()
    package_root = str(PACKAGE_DIR.parent)
    if package_root not in site.getsitepackages() + [site.getusersitepackages()]:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


def _read_lines(stream: IO[str], lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)  # the process closed its stdout: it has ended


class CheckerProcess:
    """One checker process at a time, JSON lines over its stdin and stdout; its log quoted if it dies."""

    def __init__(self, timeout: float = 600.0):
        self.timeout = timeout
        self._process: subprocess.Popen | None = None
        self._replies: queue.Queue = queue.Queue()
        self._directory: Path | None = None
        self._last_id = 0

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self.alive() else None

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        self.close()
        self._directory = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
        with open(self._directory / "checker.log", "wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "autograder.self_check.task_checker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=self._directory,
                env=checker_environment(),
                text=True,
                encoding="utf-8",
                # A session of its own: Jupyter kills a kernel's whole process group at shutdown, which
                # would take the checker with it before it could remove its folder; outside that group, it
                # reads the end of its input once the kernel is gone, and removes the folder itself.
                start_new_session=True,
            )
        self._replies = queue.Queue()
        threading.Thread(target=_read_lines, args=(self._process.stdout, self._replies), daemon=True).start()

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The checker's reply to ``payload``. A checker that is not running, or dies on the way, is
        started again once; a reply slower than ``timeout`` stops it."""
        tail = ""
        for _ in range(2):
            if not self.alive():
                self.start()
            reply = self._exchange(payload)
            if reply is not None:
                return reply
            tail = self.log_tail()
            self.close(now=True)  # it may not have exited yet: it must not be written to again
        raise CheckerError(
            "the checker process stopped before it answered" + (f"; its last words:\n{tail}" if tail else "")
        )

    def _exchange(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The reply, or None when the checker died on the way."""
        self._last_id += 1
        request_id = self._last_id
        process = self._process
        if process is None or process.stdin is None:  # closed meanwhile
            return None
        try:
            process.stdin.write(json.dumps({**payload, "id": request_id}) + "\n")
            process.stdin.flush()
        except OSError:
            return None
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                line = self._replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.close(now=True)
                raise CheckerError(f"the checks took longer than {self.timeout:g} s and were stopped") from None
            except KeyboardInterrupt:
                self.close(now=True)  # it is still busy with this request: the next one gets a fresh checker
                raise
            if line is None:
                return None
            reply = json.loads(line)
            if reply.get("id") == request_id:
                return reply

    def log_tail(self) -> str:
        if self._directory is None:  # never started
            return ""
        try:
            text = (self._directory / "checker.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-LOG_TAIL_CHARS:].strip()

    def close(self, now: bool = False) -> None:
        """Closing its input ends it when it is idle; ``now`` (or a process that does not end within seconds)
        kills it."""
        process, self._process = self._process, None
        if process is not None:
            with contextlib.suppress(OSError):
                if process.stdin is not None:
                    process.stdin.close()
            try:
                process.wait(timeout=0 if now else 5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
