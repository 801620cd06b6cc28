"""A run's limits are declared once (autograder/run/sandbox/limits.py): every command's options, the batch's and
the mutants' options and Gradescope's settings take their defaults from there, and the values given on a
command line reach the kernel's ``Limits`` whole."""

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from autograder.cli import LIMIT_FLAGS, add_limit_options, build_parser, limits_from_args
from autograder.course import GRADESCOPE_LIMITS, BatchOptions, GradescopeConfig
from autograder.course.gradescope_run import GradescopeError, read_config
from autograder.mutation import MutantGradingOptions
from autograder.run import GIB, TRUSTED_LIMITS, Limits, ResourceLimits

# The limits each command takes, and the limits its defaults are.
COMMANDS = {
    "grade": (LIMIT_FLAGS, Limits()),
    "check": (LIMIT_FLAGS, Limits()),
    "batch": (LIMIT_FLAGS, Limits()),
    "mutants": (("--timeout", "--cell-timeout"), TRUSTED_LIMITS),
    "gradescope": (("--timeout", "--cell-timeout", "--memory-gib"), GRADESCOPE_LIMITS),
}
POSITIONAL = {
    "grade": ["nb.ipynb"],
    "check": ["nb.ipynb"],
    "batch": ["class", "--lab", "lab1", "--out", "out"],
    "mutants": ["lab1"],
    "gradescope": ["lab1"],
}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _limit_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    flags = {"--timeout", "--cell-timeout", "--memory-gib", "--write-mib", "--no-sandbox"}
    return {a.option_strings[0]: a for a in parser._actions if a.option_strings and a.option_strings[0] in flags}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_its_limits_defaults_from_the_dataclass(command):
    flags, defaults = COMMANDS[command]
    options = _limit_options(_subparsers()[command])
    assert tuple(options) == flags
    expected = {
        "--timeout": defaults.total_timeout,
        "--cell-timeout": defaults.cell_timeout,
        "--memory-gib": defaults.sandbox and defaults.sandbox.memory_bytes / GIB,
        "--write-mib": defaults.sandbox and defaults.sandbox.write_bytes / 2**20,
        "--no-sandbox": False,
    }
    assert {flag: action.default for flag, action in options.items()} == {f: expected[f] for f in flags}
    args = build_parser().parse_args([command, *POSITIONAL[command]])
    assert limits_from_args(args, defaults) == defaults


def test_the_defaults_are_the_ones_documented():
    """The numbers themselves, stated once here: changing one is a decision, not a slip."""
    assert (Limits().cell_timeout, Limits().total_timeout, Limits().sandbox.memory_bytes) == (120, 600, 4 * 2**30)
    assert Limits().sandbox.write_bytes == 256 * 2**20  # the kernel's folder, TMPDIR and /dev/shm together
    # under Gradescope's 10 minutes; memory saved in its 768 MB whatever its cgroup shows
    assert GRADESCOPE_LIMITS == dataclasses.replace(Limits(), total_timeout=480, saves_memory=True)
    assert TRUSTED_LIMITS == dataclasses.replace(Limits(), sandbox=None)
    assert Limits().saves_memory is None  # decided where the kernel runs (run/kernels/malloc.memory_decided)


def test_each_limit_option_has_its_help_and_default_from_its_field():
    parser = argparse.ArgumentParser()
    add_limit_options(parser)
    helps = {a.option_strings[0]: a.help for a in parser._actions if a.option_strings}
    assert helps["--timeout"] == "seconds for the whole notebook (default 600)"
    assert helps["--cell-timeout"] == "seconds per cell (default 120)"
    assert helps["--memory-gib"] == "memory the kernel may use (default 4)"
    assert helps["--write-mib"] == "what the kernel may write: its folder, TMPDIR and /dev/shm together (default 256)"
    assert helps["--no-sandbox"] == "run the kernel without bubblewrap (only for notebooks you trust)"
    gradescope = _limit_options(_subparsers()["gradescope"])
    assert gradescope["--timeout"].help == "seconds for the whole notebook (default 480)"


def test_command_line_values_reach_the_limits():
    args = build_parser().parse_args(
        ["grade", "nb.ipynb", "--timeout", "30", "--cell-timeout", "5.5", "--memory-gib", "2.5", "--write-mib", "64"]
    )
    assert limits_from_args(args) == Limits(
        cell_timeout=5.5,
        total_timeout=30.0,
        sandbox=ResourceLimits(memory_bytes=int(2.5 * 2**30), write_bytes=64 * 2**20),
    )
    args = build_parser().parse_args(
        ["batch", "class", "--lab", "lab1", "--out", "out", "--no-sandbox", "--memory-gib", "1"]
    )
    assert limits_from_args(args) == Limits(sandbox=None)
    args = build_parser().parse_args(["mutants", "lab1", "--cell-timeout", "7"])
    assert limits_from_args(args, TRUSTED_LIMITS) == Limits(cell_timeout=7.0, sandbox=None)


def test_the_batch_and_the_mutants_default_to_the_dataclass():
    assert BatchOptions(lab="lab1", out=Path("out")).limits == Limits()
    assert MutantGradingOptions().limits == TRUSTED_LIMITS


@pytest.mark.parametrize(
    "limits",
    [Limits(), Limits(cell_timeout=3.0, sandbox=ResourceLimits(memory_bytes=2**30)), TRUSTED_LIMITS],
    ids=["default", "set", "no sandbox"],
)
def test_limits_travel_to_dask_workers_as_plain_data(limits):
    data = limits.to_dict()
    assert json.loads(json.dumps(data)) == data  # nothing but plain values
    assert Limits.from_dict(data) == limits


def test_gradescope_config_defaults_are_gradescope_limits(tmp_path):
    config = GradescopeConfig("lab1")
    assert config.limits == GRADESCOPE_LIMITS
    (tmp_path / "config.json").write_text(json.dumps(config.to_json()))
    assert read_config(tmp_path).limits == GRADESCOPE_LIMITS
    assert json.loads((tmp_path / "config.json").read_text()) == {
        "lab": "lab1",
        "hidden_visibility": "after_published",
        "cell_timeout": 120.0,
        "total_timeout": 480.0,
        "memory_gib": 4.0,
    }
    (tmp_path / "config.json").write_text(json.dumps({"lab": "lab1"}))
    assert read_config(tmp_path) == config


def test_gradescope_config_json_holds_the_limits_the_command_sets(tmp_path):
    argv = ["gradescope", "lab1", "--cell-timeout", "10", "--timeout", "100", "--memory-gib", "1.5"]
    set_ = GradescopeConfig("lab1", limits=limits_from_args(build_parser().parse_args(argv), GRADESCOPE_LIMITS))
    assert set_.limits == dataclasses.replace(
        GRADESCOPE_LIMITS, cell_timeout=10, total_timeout=100, sandbox=ResourceLimits(memory_bytes=int(1.5 * 2**30))
    )
    assert set_.to_json() == {
        "lab": "lab1",
        "hidden_visibility": "after_published",
        "cell_timeout": 10.0,
        "total_timeout": 100.0,
        "memory_gib": 1.5,
    }
    (tmp_path / "config.json").write_text(json.dumps(set_.to_json()))
    assert read_config(tmp_path) == set_


@pytest.mark.parametrize(
    "data, message",
    [
        ({"hidden_visibility": "hidden"}, "missing 1 required positional argument: 'lab'"),
        ({"lab": "lab1", "memory": 2}, "unexpected keyword argument 'memory'"),
        (["lab1"], "holds list, not a JSON object"),
    ],
)
def test_a_config_json_gradescope_cannot_read_is_refused(tmp_path, data, message):
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(GradescopeError, match=f"config.json is missing or malformed: .*{message}"):
        read_config(tmp_path)


def test_a_gradescope_config_holds_only_limits_config_json_can_hold():
    with pytest.raises(GradescopeError, match="always sandboxed"):
        GradescopeConfig("lab1", limits=dataclasses.replace(GRADESCOPE_LIMITS, sandbox=None))
    with pytest.raises(GradescopeError, match="cannot hold"):
        GradescopeConfig("lab1", limits=dataclasses.replace(GRADESCOPE_LIMITS, output_bytes_total=1))
