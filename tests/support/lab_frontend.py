"""Jupyter's front ends for tests, JupyterLab and Notebook 7: a server on a free localhost port with a
user directory of its own, lab notebooks to open in it, and its notebooks driven in headless Chromium
through the app's own commands (Playwright)."""

from __future__ import annotations

import copy
import json
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
from student_install import filled_notebook

from autograder.authoring.known_grades import make_submission
from autograder.lab import load_lab
from autograder.self_check.cell_output import NO_PUBLIC_CHECKS, NOT_ATTEMPTED


@dataclass(frozen=True)
class FrontEnd:
    """A Jupyter front end: its name, the module that serves it, the config class of its app, and the
    address a notebook opens at (``{}``: the notebook's path under the server's root)."""

    name: str
    module: str
    app_config: str
    notebook_url: str


JUPYTERLAB = FrontEnd("JupyterLab", "jupyterlab", "LabApp", "/lab/tree/{}?reset")
NOTEBOOK_7 = FrontEnd("Notebook 7", "notebook", "JupyterNotebookApp", "/notebooks/{}")

# The filled notebook: every task of lab 4, the quickest lab to run top to bottom (lab 2 takes about four
# times as long), whose timed task's public verdict is clear on any machine (its collective matmul is
# several times slower here). The untouched and wrong notebooks: lab 2 up to its first self-check, whose
# layout check draws the expected and found pictures.
FILLED_LAB = load_lab("lab4_collectives")
LAYOUT_LAB = load_lab("lab2_three_ways")
WRONG_T1 = "A_sharded = jax.device_put(A, NamedSharding(mesh, P('y', 'x')))"
# Settings of the fresh user: every cell stays in the page (no windowing), and no news pop-up.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
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
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3",
                "language": "python",
            }
        )
    )


def _up_to_check_of_t1(nb):
    nb.cells = nb.cells[: [c.get("id") for c in nb.cells].index("check-t1") + 1]
    return nb


def lab_notebooks(root: Path) -> dict[str, str]:
    """The notebooks, written under ``root``: name -> path under ``root``. ``filled``: lab 4 with every
    answer filled in; ``untouched`` and ``wrong`` (task 1 answered with the wrong layout): lab 2 up to
    task 1's self-check cell."""
    filled = filled_notebook(FILLED_LAB, root)
    nbformat.write(_up_to_check_of_t1(copy.deepcopy(LAYOUT_LAB.template)), root / "untouched.ipynb")
    wrong = make_submission(LAYOUT_LAB, {"t1": WRONG_T1}, root / "wrong.ipynb")
    nbformat.write(_up_to_check_of_t1(nbformat.read(wrong, as_version=4)), wrong)
    return {"filled": str(filled.relative_to(root)), "untouched": "untouched.ipynb", "wrong": "wrong.ipynb"}


@contextmanager
def jupyter_server(
    front_end: FrontEnd, root: Path, home: Path, env: dict[str, str], kernel_python: Path | str = sys.executable
):
    """A running ``front_end`` serving ``root``, its user directories under ``home``, its kernels
    started by ``kernel_python``, its app reachable from the page as ``window.jupyterapp``; yields its
    base URL and token."""
    data = home / "data"
    _kernel_spec(data, kernel_python)
    for name, value in SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **env,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(data),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "HOME": str(home),
    }
    log_path = home / f"{front_end.module}.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            front_end.module,
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={root}",
            f"--IdentityProvider.token={token}",
            "--ServerApp.open_browser=False",
            "--ServerApp.allow_root=True",
            f"--{front_end.app_config}.expose_app_in_browser=True",
        ],
        env=env,
        cwd=root,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(front_end, url, token, server, log_path)
        yield url, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _wait_until_up(
    front_end: FrontEnd, url: str, token: str, server: subprocess.Popen, log: Path, timeout: float = 120
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{front_end.name} exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{front_end.name} did not answer in {timeout} s: {log.read_text()[-2000:]}")


def run_all(front_end: FrontEnd, page, url: str, token: str, notebook: str, timeout_ms: float = 240_000) -> None:
    """Open ``notebook`` (its path under the server's root) in ``front_end`` and run every cell the way
    its users do: JupyterLab's "run all cells" command; Notebook 7's menu Run, then Run All Cells."""
    address = front_end.notebook_url.format(notebook)
    page.goto(f"{url}{address}{'&' if '?' in address else '?'}token={token}")
    page.wait_for_function(KERNEL_IDLE, timeout=120_000, polling=500)
    if front_end == NOTEBOOK_7:
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    else:
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(RUN_FINISHED, timeout=timeout_ms, polling=1000)


def shown_verdicts(page) -> list[tuple[str, str]]:
    """(task, verdict) of every check result rendered on the page."""
    return [
        tuple(v)
        for v in page.eval_on_selector_all(
            ".autograder-check [data-task]", "els => els.map(e => [e.dataset.task, e.dataset.verdict])"
        )
    ]


def assert_every_task_passed(verdicts: list[tuple[str, str]], screenshot: Path) -> None:
    """The filled notebook, as the page shows it: every task passed (a task checked only in grading says so)."""
    assert [task for task, _ in verdicts] == [t.id for t in FILLED_LAB.tasks]
    assert all(v in ("passed", NO_PUBLIC_CHECKS) for _, v in verdicts), verdicts
    assert sum(v == "passed" for _, v in verdicts) >= len(FILLED_LAB.tasks) - 1
    assert screenshot.stat().st_size > 10_000


def assert_not_attempted(verdicts: list[tuple[str, str]]) -> None:
    assert verdicts == [("t1", NOT_ATTEMPTED)]


def assert_wrong_layout_shown(verdicts: list[tuple[str, str]], pictures: list[bool]) -> None:
    """The wrong layout: t1 partly right, with the expected and the found pictures both visible."""
    assert verdicts == [("t1", "partial")]
    assert pictures == [True, True]
