"""A lab's modules load whole when threads ask for them at once: the run reads the lab's captures while the
grader's thread reads its reference (a fresh grading process, as in Gradescope's container or a batch
worker)."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from autograder.paths import BUNDLED_LABS, COURSE_ENVIRONMENT, COURSE_FILE

RACE = textwrap.dedent("""
    import importlib._bootstrap, importlib.abc, importlib.machinery, sys, threading, time
    from autograder.lab import load_lab

    LAB = "lab2_three_ways"
    holding, go, errors = threading.Event(), threading.Event(), []

    class PausedLoader(importlib.abc.Loader):
        def __init__(self, loader):
            self.loader = loader

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def exec_module(self, module):
            holding.set()
            go.wait(20)
            self.loader.exec_module(module)

    class PauseInsideTheLabsImport(importlib.abc.MetaPathFinder):
        # The run's thread, reading the lab's captures, imports autograder.labs, not loaded yet: that import
        # pauses before any of the lab's modules exists, the moment at which the grader's thread asks for the
        # reference (which the captures import too).
        def find_spec(self, name, path=None, target=None):
            if name != "autograder.labs" or threading.current_thread().name != "run":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            spec.loader = PausedLoader(spec.loader)
            return spec

    sys.meta_path.insert(0, PauseInsideTheLabsImport())
    assert "autograder.labs" not in sys.modules
    lab = load_lab(LAB)
    print("layout:", "captures in __init__" if lab.captures_in_init else "captures module")

    def read(what):
        try:
            len(lab.captures) if what == "captures" else lab.reference.__name__
        except BaseException as exc:
            errors.append(f"{what}: {type(exc).__name__}: {exc}")

    run = threading.Thread(target=read, args=("captures",), name="run")
    run.start()
    holding.wait(20)
    grader = threading.Thread(target=read, args=("reference",), name="grader")
    grader.start()
    blocking_on = importlib._bootstrap._blocking_on  # thread id -> the module lock it waits for
    deadline = time.monotonic() + 20
    while grader.is_alive() and grader.ident not in blocking_on and time.monotonic() < deadline:
        time.sleep(0.01)  # until the grader's thread waits for a module's lock (or is done)
    go.set()
    run.join(60)
    grader.join(60)
    print(errors or "whole")
""")


def _lab_written_before_captures_had_a_module(tmp_path) -> dict[str, str]:
    """The environment of a course whose lab2_three_ways is the bundled one as an older ``new-lab`` laid it
    out: its captures in its package's ``__init__``, which imports the reference."""
    lab = tmp_path / "course" / "labs" / "lab2_three_ways"
    shutil.copytree(BUNDLED_LABS / lab.name, lab, ignore=shutil.ignore_patterns("__pycache__"))
    (lab / "__init__.py").write_text((lab / "captures.py").read_text())
    (lab / "captures.py").unlink()
    (tmp_path / "course" / COURSE_FILE).write_text('[course]\nlabs = "labs"\n')
    return {**os.environ, COURSE_ENVIRONMENT: str(tmp_path / "course")}


@pytest.mark.parametrize("layout", ["captures module", "captures in __init__"])
def test_the_run_and_the_grader_load_the_lab_at_the_same_moment(layout, tmp_path):
    environment = None if layout == "captures module" else _lab_written_before_captures_had_a_module(tmp_path)
    done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=300, env=environment)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"layout: {layout}" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "whole", done.stdout[-2000:]


GRADERS_RACE = textwrap.dedent("""
    import contextlib, importlib.abc, sys, threading
    import pytest
    from _pytest.pathlib import ImportMode, import_path
    from autograder.grading.pytest_plugin import run_graders
    from autograder.lab import load_lab

    LAB = "lab2_three_ways"
    holding, go, errors = threading.Event(), threading.Event(), []

    class PauseInsideTheLabsInit(importlib.abc.MetaPathFinder):
        # The grader's thread, loading the graders, pauses where they import the reference: the moment at
        # which the run's thread reads the lab's captures (which import the reference too).
        def find_spec(self, name, path=None, target=None):
            if name == f"autograder.labs.{LAB}.reference" and threading.current_thread().name == "grader":
                holding.set()
                go.wait(20)
            return None

    def pytest_loads_the_graders(args, plugins):
        # What pytest.main does first: import the graders' file in importlib mode.
        import_path(lab.grader_path, mode=ImportMode.importlib, root=lab.grader_path.parent,
                    consider_namespace_packages=False)
        return pytest.ExitCode.OK

    class Execution:
        grader_busy = staticmethod(contextlib.nullcontext)

    sys.meta_path.insert(0, PauseInsideTheLabsInit())
    pytest.main = pytest_loads_the_graders
    lab = load_lab(LAB)

    def grade():
        try:
            run_graders(lab, Execution(), seed=1)
        except BaseException as exc:
            errors.append(f"graders: {type(exc).__name__}: {exc}")

    def run():
        try:
            len(lab.captures)
        except BaseException as exc:
            errors.append(f"captures: {type(exc).__name__}: {exc}")

    grader = threading.Thread(target=grade, name="grader")
    grader.start()
    holding.wait(20)
    reader = threading.Thread(target=run, name="run")
    reader.start()
    reader.join(2.0)  # a half-run lab is read at once; a whole one waits for the grader's import
    go.set()
    grader.join(60)
    reader.join(60)
    print(errors or "whole")
""")


def test_the_run_reads_the_captures_while_pytest_loads_the_graders():
    """pytest's importlib mode runs a package's __init__ itself, outside Python's import locks: the lab's
    captures are a module of their own, which the run's thread imports under those locks, so it never reads
    a half-run one."""
    done = subprocess.run([sys.executable, "-c", GRADERS_RACE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "whole", done.stdout[-2000:]
