"""The options several commands share: the run's limits, declared once beside their defaults
(run/sandbox/limits.py), where many notebooks are graded, ``--allow-stale-assignment``; and how a command stops."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from autograder.run import Limits, ResourceLimits

LIMIT_FLAGS = ("--timeout", "--cell-timeout", "--memory-gib", "--write-mib", "--no-sandbox")
STALE_OPTION = "--allow-stale-assignment"


def _limit_fields() -> dict[str, tuple[type, dataclasses.Field]]:
    """Each limit's flag: the dataclass whose field it sets (``Limits`` or ``ResourceLimits``) and that field."""
    return {
        f.metadata["flag"]: (owner, f)
        for owner in (Limits, ResourceLimits)
        for f in dataclasses.fields(owner)
        if "flag" in f.metadata
    }


def _holder(limits: Limits, owner: type) -> Limits | ResourceLimits | None:
    return limits if isinstance(limits, owner) else limits.sandbox


def add_limit_options(
    parser: argparse.ArgumentParser, defaults: Limits = Limits(), flags: tuple[str, ...] = LIMIT_FLAGS
) -> None:
    """Add the limits' options ``flags``, their defaults those of ``defaults`` in the flags' units."""
    fields = _limit_fields()
    for flag in flags:
        owner, field = fields[flag]
        if field.name == "sandbox":  # a switch: the kernel runs without its sandbox
            parser.add_argument(flag, action="store_true", help=field.metadata["help"])
            continue
        default = getattr(_holder(defaults, owner), field.name) / field.metadata["unit"]
        parser.add_argument(flag, type=float, default=default, help=f"{field.metadata['help']} (default {default:g})")


def limits_from_args(args: argparse.Namespace, defaults: Limits = Limits()) -> Limits:
    """``defaults`` with the values of the limits' options that ``args`` holds."""
    values: dict[type, dict] = {Limits: {}, ResourceLimits: {}}
    for flag, (owner, field) in _limit_fields().items():
        dest = flag.removeprefix("--").replace("-", "_")
        if field.name != "sandbox" and hasattr(args, dest):
            kind = type(getattr(_holder(defaults, owner), field.name))  # seconds as floats, bytes as ints
            values[owner][field.name] = kind(getattr(args, dest) * field.metadata["unit"])
    sandbox = defaults.sandbox
    if sandbox is not None:
        sandbox = None if getattr(args, "no_sandbox", False) else dataclasses.replace(sandbox, **values[ResourceLimits])
    return dataclasses.replace(defaults, **values[Limits], sandbox=sandbox)


def stopped(exc: Exception) -> int:
    """A command that cannot go on says why on stderr and exits 2."""
    print(f"autograder: {exc}", file=sys.stderr)
    return 2


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, help="local Dask workers (default: one per core)")
    parser.add_argument("--scheduler", help="address of an existing Dask scheduler, e.g. tcp://host:8786")


def add_stale_assignment_option(parser: argparse.ArgumentParser, what: str = "grade") -> None:
    parser.add_argument(
        STALE_OPTION,
        action="store_true",
        help=f"{what} even when the lab's student notebook under assignments/ is not what `autograder assign` "
        "writes from its solution now (by default the command stops: run `autograder assign LAB`)",
    )


def notebook_lab(notebook: str) -> str | None:
    """The lab a notebook's metadata names, or None. Read as plain JSON, unvalidated: grading validates it."""
    import nbformat

    from autograder.lab import lab_of_notebook

    try:
        raw = json.loads(Path(notebook).read_bytes())
        return lab_of_notebook(nbformat.from_dict(raw)) if isinstance(raw, dict) else None
    except (OSError, ValueError, AttributeError):  # not a file, not JSON, no metadata: not this check's to say
        return None


def refuses_stale(args: argparse.Namespace, lab_id: str | None) -> bool:
    """Whether the command must stop, so that a solution edited and not yet assigned is not graded with its
    old tasks and points (said on stderr). An unknown lab is left to the command, which names it."""
    if lab_id is None or args.allow_stale_assignment:
        return False
    from autograder.authoring import stale_assignment
    from autograder.lab import LabError, load_lab

    try:
        reason = stale_assignment(load_lab(lab_id))
    except LabError:
        return False
    if reason is None:
        return False
    print(f"autograder: {reason} (or pass {STALE_OPTION} to use the student notebook as it is)", file=sys.stderr)
    return True
