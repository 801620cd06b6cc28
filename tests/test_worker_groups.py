"""The suite's groups of tests hold on two workers: the tests reading a lab's gradings, modules marked to
share a worker, and each module's tests each run on one worker, whatever pytest's node ids carry; the
groups that start first come first; the controller's file of groups is gone once the run ends."""

import json
import os
from pathlib import Path

WORKERS_ALIKE = ["-p", "worker_groups", "-p", "no:cacheprovider", "--dist", "loadscope", "--no-loadscope-reorder"]

CONFTEST = """
import os
from pathlib import Path

import pytest


@pytest.fixture
def lab_grades():
    return None


@pytest.fixture(autouse=True)
def _where(request):
    folder = Path(os.environ["RAN_ON"])
    name = request.node.nodeid.replace("/", "_").replace(":", "_")
    (folder / name).write_text(os.environ.get("PYTEST_XDIST_WORKER", "alone"))
"""

READS_GRADINGS = """
import pytest


@pytest.mark.parametrize("lab_id", ["lab_a", "lab_b"])
def test_reads(lab_grades, lab_id):
    pass
"""

ALSO_READS = """
def test_reads_too(lab_grades):
    pass
"""

COUPLED = """
from worker_groups import together

pytestmark = together("coupled")


def test_one():
    pass


def test_two():
    pass
"""

PLAIN = """
import pytest


@pytest.mark.parametrize("n", range(6))
def test_plain(n):
    pass
"""


def _suite(pytester, monkeypatch, ran_on):
    monkeypatch.setenv("RAN_ON", str(ran_on))
    monkeypatch.setenv("TMPDIR", str(ran_on.parent))
    support = str(Path(__file__).parent / "support")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([support, os.environ.get("PYTHONPATH", "")]))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_a_gradings=READS_GRADINGS,
        test_b_coupled=COUPLED,
        test_c_plain=PLAIN,
        test_d_plain=PLAIN,
        test_e_coupled=COUPLED,
        test_f_gradings=ALSO_READS,
    )


def test_each_group_runs_on_one_worker_and_its_file_is_removed(pytester, monkeypatch, tmp_path):
    ran_on = tmp_path / "ran-on"
    ran_on.mkdir()
    _suite(pytester, monkeypatch, ran_on)
    result = pytester.runpytest_subprocess("-n", "2", "-v", *WORKERS_ALIKE)
    result.assert_outcomes(passed=2 + 1 + 2 * 2 + 2 * 6)
    assert "scheduling tests via GroupScheduling" in result.stdout.str()
    workers = {path.name: path.read_text() for path in ran_on.iterdir()}
    groups = {
        "gradings": {w for name, w in workers.items() if "gradings" in name},
        "coupled": {w for name, w in workers.items() if "coupled" in name},
        "plain c": {w for name, w in workers.items() if "c_plain" in name},
        "plain d": {w for name, w in workers.items() if "d_plain" in name},
    }
    assert all(len(ran) == 1 for ran in groups.values()), groups
    assert set().union(*groups.values()) == {"gw0", "gw1"}  # both workers had work
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("autograder-test-groups-")]


def test_the_groups_that_start_first_come_first(pytester, monkeypatch, tmp_path):
    ran_on = tmp_path / "ran-on"
    ran_on.mkdir()
    _suite(pytester, monkeypatch, ran_on)
    result = pytester.runpytest_subprocess("-n", "0", "--collect-only", "-q", *WORKERS_ALIKE)
    order = [line.split("::")[0] for line in result.stdout.lines if "::" in line]
    modules = list(dict.fromkeys(order))
    # the named groups first, the larger first (the gradings: 3 tests; coupled: 4), then modules by size
    assert modules[:4] == ["test_b_coupled.py", "test_e_coupled.py", "test_a_gradings.py", "test_f_gradings.py"]
    assert set(modules[4:]) == {"test_c_plain.py", "test_d_plain.py"}, json.dumps(order)
