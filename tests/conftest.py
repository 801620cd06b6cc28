"""Test session setup: 8 virtual CPU devices for the grader-side JAX, as the harness uses, a
reference cache of the session's own, kernels that end with the test module that started them
(tests/support/kernel_leaks.py), and the groups of tests that share a worker (tests/support/worker_groups.py)."""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("PJRT_NPROC", "16")


import pytest  # noqa: E402
from kernel_leaks import kernels_end_with_their_module  # noqa: E402, F401  (autouse)

# tests/test_kernel_leaks.py runs a module of its own; worker_groups: which tests share a worker
pytest_plugins = ("pytester", "worker_groups")


def pytest_addoption(parser):
    parser.addoption(
        "--lab",
        action="append",
        default=[],
        metavar="LAB",
        help="run only the tests of this lab: those parametrized by its id (`autograder test LAB`)",
    )


def pytest_collection_modifyitems(config, items):
    """With ``--lab``, keep the tests whose ``lab_id`` parameter is one of those labs."""
    labs = config.getoption("lab")
    if not labs:
        return
    from autograder.lab import lab_ids

    unknown = sorted(set(labs) - set(lab_ids()))
    if unknown:
        raise pytest.UsageError(f"--lab: unknown lab {', '.join(unknown)}; labs: {', '.join(lab_ids())}")
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        (kept if params.get("lab_id") in labs else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session", autouse=True)
def _reference_cache(tmp_path_factory):
    """A reference cache of the session's own (``AUTOGRADER_CACHE_DIR``, inherited by the processes the
    tests start): the suite never reads a stale cache nor writes into the user's; and timed turns of its
    own (``AUTOGRADER_TURNS_DIR``): its gradings take turns among themselves, not with the user's. The
    workers of one run (pytest-xdist) share both: a reference is computed once, and a timed task has the
    machine's turn alone."""
    folder, turns = (_session_folder(tmp_path_factory, name) for name in ("autograder-cache", "autograder-turns"))
    own = {"AUTOGRADER_CACHE_DIR": folder, "AUTOGRADER_TURNS_DIR": turns}
    previous = {name: os.environ.get(name) for name in own}
    os.environ.update({name: str(path) for name, path in own.items()})
    yield folder
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _session_folder(tmp_path_factory, name: str):
    """A private folder of this run: beside the workers' own folders under pytest-xdist, shared by them."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return tmp_path_factory.mktemp(name)
    folder = tmp_path_factory.getbasetemp().parent / name
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def _lab_runs(tmp_path_factory):
    """lab id -> (lab, grades, self-checks, case groups), graded once per session on first use (see
    lab_grades); known-grade cases that can share a notebook are graded in one (case_groups.py)."""
    from grading_session import grade_all
    from lab_submissions import CASES_BY_LAB

    from autograder.authoring.case_groups import grouped, task_order, timed_tasks
    from autograder.lab import load_lab

    runs = {}

    def run(lab_id: str):
        if lab_id not in runs:
            lab, self_checks = load_lab(lab_id), {}
            cases = CASES_BY_LAB[lab_id]
            groups = grouped(cases, timed_tasks(lab), task_order(lab))
            grades = grade_all(lab, cases, tmp_path_factory.mktemp(lab_id), self_checks=self_checks, groups=groups)
            group_of = {case.name: group for group in groups for case in group.cases}
            runs[lab_id] = (lab, grades, self_checks, group_of)
        return runs[lab_id]

    return run


@pytest.fixture(scope="session")
def lab_grades(_lab_runs):
    """lab id -> (lab, grades): the lab's solution, untouched notebook and known-grade submissions,
    graded once per session on first use, two at a time."""
    return lambda lab_id: _lab_runs(lab_id)[:2]


@pytest.fixture(scope="session")
def lab_self_checks(_lab_runs):
    """lab id -> name -> the public checks the self-check finds on the facts of the
    same gradings as lab_grades (run by the notebook's checker, in this process)."""
    return lambda lab_id: _lab_runs(lab_id)[2]


@pytest.fixture(scope="session")
def lab_case_groups(_lab_runs):
    """lab id -> case name -> the group of cases it was graded with in lab_grades (case_groups.py)."""
    return lambda lab_id: _lab_runs(lab_id)[3]


@pytest.fixture(scope="session")
def students_wheel_python(tmp_path_factory):
    """The python of a fresh venv with the students' wheel of the checkout installed: built once per
    session and shared by the tests that run the labs in Jupyter's front ends."""
    from student_install import installed_venv

    return installed_venv(tmp_path_factory.mktemp("student-install"))
