"""The grader measures with the malloc its run's kernel timed with (grading/graded_run.py): blocks kept up to
the bound where that kernel saves memory, as large as glibc's own grow where it keeps them."""

from __future__ import annotations

import pytest

from autograder.grading.graded_run import RunAlongside, RunToEnd
from autograder.run import Execution, RunRequest, RunStatus
from autograder.run.kernels import malloc
from autograder.run.plan import Plan
from autograder.run.sandbox.limits import Limits


def _ended(request: RunRequest, live) -> Execution:
    execution = Execution(RunStatus.COMPLETED, "", None, {}, {}, [], 0.0)
    if live is not None:
        live.ended(execution.status, "", None)
    return execution


@pytest.mark.parametrize("graded", [RunAlongside, RunToEnd])
@pytest.mark.parametrize("saves_memory", [True, False])
def test_the_checks_time_as_the_run_s_kernel_did(graded, saves_memory, monkeypatch):
    seen = []
    monkeypatch.setattr(malloc, "malloc_for_timing", lambda bounded=False: seen.append(bounded) or True)
    request = RunRequest(Plan((), ()), {}, Limits(saves_memory=saves_memory), seed=1)
    run = graded(_ended, request)
    with run.checks_phase(), malloc.under_timing_malloc():
        pass
    with malloc.under_timing_malloc():  # outside a run's checks: as large as glibc's own grow
        pass
    run.result()
    assert seen == [saves_memory, False]
