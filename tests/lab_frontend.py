"""JupyterLab for tests: a server on a free localhost port with a user directory of its own, and its
notebooks driven in headless Chromium through the app's own commands (Playwright)."""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from browser import FLAGS

# Settings of the fresh user: every cell stays in the page (no windowing), and no news pop-up.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
}
# The notebook in the main area, with its kernel idle.
KERNEL_IDLE = """() => {
  const app = window.jupyterapp; const w = app && app.shell.currentWidget;
  const kernel = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!(w && w.content && w.context.isReady && kernel && kernel.status === 'idle');
}"""
# Every code cell ran (or the run stopped at an error) and the kernel is idle again.
RUN_FINISHED = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
  const prompts = [...w.node.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent);
  return kernel && kernel.status === 'idle' && prompts.length > 0 && !prompts.some(p => p.includes('*'))
    && w.content.widgets.filter(c => c.model.type === 'code').every(c => c.model.executionCount !== null);
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kernel_spec(data: Path, python: Path | str) -> None:
    """The ``python3`` kernel of ``python`` (a venv with the students' wheel, or this interpreter)."""
    spec = data / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))


@contextmanager
def jupyterlab(root: Path, home: Path, env: dict[str, str], kernel_python: Path | str = sys.executable):
    """A running JupyterLab serving ``root``, its user directories under ``home``, its kernels started
    by ``kernel_python``; yields its base URL with the token."""
    data = home / "data"
    _kernel_spec(data, kernel_python)
    for name, value in SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    port, token = _free_port(), secrets.token_hex(16)
    env = {**env, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(data),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), "HOME": str(home)}
    log = (home / "jupyterlab.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}",
         "--ServerApp.open_browser=False", "--ServerApp.allow_root=True", "--LabApp.expose_app_in_browser=True"],
        env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, token, server, home / "jupyterlab.log")
        yield url, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _wait_until_up(url: str, token: str, server: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not answer in {timeout} s: {log.read_text()[-2000:]}")


@contextmanager
def chromium_page(executable: str):
    """A page of headless Chromium (the system's, driven by Playwright)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=[*FLAGS], headless=True)
        try:
            yield browser.new_page(viewport={"width": 1300, "height": 1000})
        finally:
            browser.close()


def run_all(page, url: str, token: str, notebook: str, timeout_ms: float = 240_000) -> None:
    """Open ``notebook`` (relative to the server's root) and run every cell with JupyterLab's command."""
    page.goto(f"{url}/lab/tree/{notebook}?reset&token={token}")
    page.wait_for_function(KERNEL_IDLE, timeout=120_000, polling=500)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(RUN_FINISHED, timeout=timeout_ms, polling=1000)


def shown_verdicts(page) -> list[tuple[str, str]]:
    """(task, verdict) of every check result rendered on the page."""
    return [tuple(v) for v in page.eval_on_selector_all(
        ".autograder-check [data-task]", "els => els.map(e => [e.dataset.task, e.dataset.verdict])")]

