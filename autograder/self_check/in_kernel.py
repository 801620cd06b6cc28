"""The student's self-check, ``ag.check("t3")``, in the student's own kernel: every failure becomes a
message for the student, never a traceback."""

from __future__ import annotations

import atexit
import importlib.util
import os
import secrets
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat

from autograder.facts import TaskCapture, task_seed
from autograder.grading import CheckResult, tested_range, version_problem
from autograder.kernel import LAB_PROBE_MODULE, record_task_facts
from autograder.lab import Lab, LabError, lab_ids, lab_of_notebook, load_lab
from autograder.run import DEVICE_COUNT
from autograder.self_check.cell_output import SelfCheckReport, TaskSelfCheck, self_check_html
from autograder.self_check.checker_process import CheckerError, CheckerProcess

DEVICE_HELP = f"""Make this the first cell of the notebook:

    import os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count={DEVICE_COUNT}"
    os.environ["JAX_PLATFORMS"] = "cpu"

then restart the kernel and run the notebook again from the top: the setting only works before JAX starts."""

_checker: CheckerProcess | None = None


class SelfCheckProblem(Exception):
    """Why the self-check could check nothing, in words for the student."""


def check(task: str | None = None, lab: str | None = None) -> None:
    """Check ``task`` (or every task) of the notebook this is called from, and show the result."""
    from IPython.display import HTML, display

    try:
        report = self_check_namespace(sys._getframe(1).f_globals, task, lab)
    except Exception as exc:  # a fault of the harness: a message, not a traceback, under the student's cell
        report = SelfCheckReport(lab, problem=f"The check itself failed ({type(exc).__name__}: {exc}).")
    display(HTML(self_check_html(report)))


def self_check_namespace(
    namespace: Mapping[str, Any], task: str | None = None, lab: str | None = None
) -> SelfCheckReport:
    """The public checks of ``task`` (every task when None) on what ``namespace`` binds now."""
    lab_id = None
    try:
        lab_id = find_lab(lab, namespace)
        if problem := device_problem():
            raise SelfCheckProblem(problem)
        tasks = _self_check_tasks(load_lab(lab_id), namespace, task)
        return SelfCheckReport(lab_id, tasks, warning=jax_version_warning())
    except SelfCheckProblem as problem:
        return SelfCheckReport(lab_id, problem=str(problem))
    except (CheckerError, LabError) as exc:
        return SelfCheckReport(lab_id, problem=f"The check could not run: {exc}")


def find_lab(lab: str | None, namespace: Mapping[str, Any]) -> str:
    """The lab given, or the one in the metadata of the notebook file this kernel runs."""
    if lab is not None:
        if lab not in lab_ids():
            raise SelfCheckProblem(f"There is no lab {lab!r}; the labs are {', '.join(lab_ids())}.")
        return lab
    for path in _notebook_paths(namespace):
        try:
            found = lab_of_notebook(nbformat.read(path, as_version=4))
        except (OSError, ValueError):
            continue
        if found:
            return found
    raise SelfCheckProblem(
        f'Which lab is this? Say it, e.g. check("t1", lab="{lab_ids()[0]}"); the labs are {", ".join(lab_ids())}.'
    )


def _notebook_paths(namespace: Mapping[str, Any]) -> list[Path]:
    """Where the notebook file may be: VS Code names it in the namespace, Jupyter in the environment."""
    names = [namespace.get("__vsc_ipynb_file__"), os.environ.get("JPY_SESSION_NAME")]
    paths = []
    for name in (n for n in names if isinstance(n, str) and n.endswith(".ipynb")):
        path = Path(name)
        paths += [path] if path.is_absolute() else [Path.cwd() / path, Path.cwd() / path.name]
    return [p for p in paths if p.is_file()]


def device_problem() -> str | None:
    """None when JAX here has the lab's CPU devices, else what to do about it."""
    try:
        import jax

        devices = jax.devices()
    except Exception as exc:
        return f"JAX could not start here ({type(exc).__name__}: {exc}).\n\n{DEVICE_HELP}"
    platforms = sorted({d.platform for d in devices})
    if len(devices) == DEVICE_COUNT and platforms == ["cpu"]:
        return None
    return (
        f"These checks need the lab's {DEVICE_COUNT} CPU devices, and JAX in this kernel has "
        f"{len(devices)} {'/'.join(platforms)} device{'s' if len(devices) != 1 else ''}.\n\n{DEVICE_HELP}"
    )


def jax_version_warning() -> str | None:
    """A warning where this kernel's JAX is not one the harness is tested on: the checks still run (a newer
    JAX usually works), but the course grades with a tested one."""
    from importlib import metadata

    try:
        installed = metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None
    problem = version_problem("jax", installed, tested_range("jax"))
    return None if problem is None else f"{problem}\n\nThe results below may differ from your grade."


def _self_check_tasks(lab: Lab, namespace: Mapping[str, Any], task: str | None) -> tuple[TaskSelfCheck, ...]:
    if task is not None and task not in lab.captures:
        raise SelfCheckProblem(f"{lab.id} has no task {task!r}; its tasks are {', '.join(lab.captures)}.")
    tasks = [task] if task is not None else list(lab.captures)
    _load_lab_probe(lab)
    seed = secrets.randbelow(2**31)
    with tempfile.TemporaryDirectory(prefix="autograder-self-check-", ignore_cleanup_errors=True) as folder:
        directory = Path(folder).resolve()
        undefined, facts = {}, {}
        for name in tasks:
            capture = lab.captures[name]
            undefined[name] = _undefined(capture, namespace)
            if not undefined[name]:
                facts[name] = str(directory / name)
                record_task_facts(capture.manifest(facts[name], task_seed(seed, name)), namespace)
        checks = _run_checks(lab.id, seed, facts) if facts else []
    return tuple(TaskSelfCheck(name, tuple(c for c in checks if c.task == name), undefined[name]) for name in tasks)


def _undefined(capture: TaskCapture, namespace: Mapping[str, Any]) -> tuple[str, ...]:
    """The names a task binds when none of them is defined (the task is not attempted), else ()."""
    names = tuple(dict.fromkeys(capture.names + tuple(c.function for c in capture.calls)))
    return () if any(name in namespace for name in names) else names


def _load_lab_probe(lab: Lab) -> None:
    """The lab's kernel probe, where the kernel recorder looks for it."""
    path = lab.kernel_probe_path
    loaded = sys.modules.get(LAB_PROBE_MODULE)
    if path is None or (loaded is not None and getattr(loaded, "__file__", None) == str(path)):
        return
    spec = importlib.util.spec_from_file_location(LAB_PROBE_MODULE, path)
    if spec is None or spec.loader is None:  # a .py file always has both
        raise ImportError(f"cannot load the lab's kernel probe {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[LAB_PROBE_MODULE] = module


def _run_checks(lab_id: str, seed: int, facts: dict[str, str]) -> list[CheckResult]:
    global _checker
    if _checker is None:
        _checker = CheckerProcess()
        atexit.register(_checker.close)
    reply = _checker.request({"lab": lab_id, "seed": seed, "tasks": facts})
    if "error" in reply:
        raise CheckerError(reply["error"])
    return [CheckResult(**c) for c in reply["checks"] if not c.get("hidden")]
