"""Which tests share a worker when the suite runs on two (pytest-xdist), and in what order groups start.

Much of the suite waits: for a pip install, for a container in half a CPU, for a kernel's timeout, for
a browser. Two workers fill those waits with the other's work. What a session computes once (a lab's
gradings, the students' install) is computed once per worker that needs it, so the tests that need it
run on one worker; and a module's fixtures are made once per worker, so a module's tests stay together.
Each test gets an ``xdist_group`` mark (``assign``), the first of these that applies:

- a mark it already has (``together``, on modules coupled otherwise than by a fixture);
- ``lab-gradings`` for a test that reads the session's gradings of a lab;
- ``student-install`` for every test of a module that uses the students' installed wheel;
- its module's path.

The four labs' gradings are one group: each keeps both cores busy, so two at once on two workers took
as long as both (labs 1 and 2: 240 s each, against 75 and 100 s alone), and slowed the rest of the
suite. The reference cache and the timed turns are the session's, shared by both workers
(tests/conftest.py), so a reference is computed once and a timed task has the machine's turn alone.

Groups start longest first, so that no long one is left for the end while the other worker idles: the
groups named above and those holding a ``slow`` test (it executes notebooks) first, then by their
number of tests. pytest-xdist's own ``--dist loadgroup`` reads these marks, but pytest 9.2's node ids
no longer carry the group it appends to them (pytest-dev/pytest-xdist#1386), so the workers write each
test's group to a file the controller names (``share``) and ``GroupScheduling`` reads it.

A pytest plugin (tests/conftest.py names it): its hooks are at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler.loadscope import LoadScopeScheduling

LAB_GRADINGS = frozenset({"lab_grades", "lab_self_checks", "lab_case_groups"})  # conftest.py's fixtures
STUDENT_INSTALL = "students_wheel_python"
GROUP_MARK = "xdist_group"
GROUPS_FILE_VARIABLE = "AUTOGRADER_TEST_GROUPS_FILE"  # set by the controller, inherited by its workers
_SHARED = pytest.StashKey[Path]()  # the folder of the groups' file the controller made


def together(name: str) -> pytest.MarkDecorator:
    """The mark of modules that must share a worker for a reason of their own (``name`` says which)."""
    return pytest.mark.xdist_group(name)


def assign(items: list[pytest.Item]) -> dict[str, str]:
    """Give each item its group's mark, as the module docstring says, and put the groups that start first
    first (``items`` is reordered, each group's tests keeping their order); test id -> group."""
    installs = {item.path for item in items if STUDENT_INSTALL in getattr(item, "fixturenames", ())}
    groups = {}
    for item in items:
        if item.get_closest_marker(GROUP_MARK) is None:
            if LAB_GRADINGS & set(getattr(item, "fixturenames", ())):
                group = "lab-gradings"
            elif item.path in installs:
                group = "student-install"
            else:
                group = str(item.path)
            item.add_marker(pytest.mark.xdist_group(group))
        groups[item.nodeid] = str(item.get_closest_marker(GROUP_MARK).args[0])
    sizes: dict[str, int] = {}
    early = set()
    for item in items:
        group = groups[item.nodeid]
        sizes[group] = sizes.get(group, 0) + 1
        if group != str(item.path) or item.get_closest_marker("slow") is not None:
            early.add(group)
    first_seen = {group: index for index, group in enumerate(dict.fromkeys(groups.values()))}
    items.sort(key=lambda item: _start(groups[item.nodeid], early, sizes, first_seen))
    return groups


def _start(group: str, early: set[str], sizes: dict[str, int], first_seen: dict[str, int]) -> tuple:
    return (group not in early, -sizes[group], first_seen[group])


def _scheduled_by_group(config: pytest.Config) -> bool:
    """The suite's ``--dist loadscope`` (pyproject.toml), on the controller; any other ``--dist`` is
    pytest-xdist's own."""
    return not hasattr(config, "workerinput") and config.getoption("dist", "no") == "loadscope"


def share(config: pytest.Config) -> None:
    """On the controller of a run scheduled by group: name the file its workers write the groups to."""
    if not _scheduled_by_group(config):
        return
    folder = Path(tempfile.mkdtemp(prefix="autograder-test-groups-"))
    config.stash[_SHARED] = folder
    os.environ[GROUPS_FILE_VARIABLE] = str(folder / "groups.json")


def forget(config: pytest.Config) -> None:
    """On the controller: remove the file and its folder, if this run made them."""
    folder = config.stash.get(_SHARED, None)
    if folder is not None:
        os.environ.pop(GROUPS_FILE_VARIABLE, None)
        shutil.rmtree(folder, ignore_errors=True)


def write(config: pytest.Config, groups: dict[str, str]) -> None:
    """On a worker: write test id -> group where the controller said (each worker writes the same, whole)."""
    path = os.environ.get(GROUPS_FILE_VARIABLE)
    if path is None or not hasattr(config, "workerinput"):
        return
    partial = Path(f"{path}.{config.workerinput['workerid']}")
    partial.write_text(json.dumps(groups))
    partial.replace(path)


class GroupScheduling(LoadScopeScheduling):
    """pytest-xdist's scheduling by scope, a scope being a group of ``assign``: a group runs whole on one
    worker, and groups are handed out in the order of the collection (``--no-loadscope-reorder``)."""

    def __init__(self, config: pytest.Config, log=None):
        super().__init__(config, log)
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:
            path = os.environ.get(GROUPS_FILE_VARIABLE)
            self._groups = json.loads(Path(path).read_text()) if path and Path(path).is_file() else {}
        return self._groups.get(nodeid) or nodeid.split("::")[0]


def pytest_configure(config):
    share(config)


def pytest_unconfigure(config):
    forget(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Groups of tests, each whole on one worker, in the order ``assign`` puts them."""
    return GroupScheduling(config, log) if _scheduled_by_group(config) else None


@pytest.hookimpl(trylast=True)  # once the tests not run (``--lab``, ``-k``) are deselected
def pytest_collection_modifyitems(config, items):
    write(config, assign(items))
