"""The options of a run's limits that the grading commands share, read from ``run/sandbox/limits.py``'s fields
(each field's flag, help and unit), so that a limit's option is declared once, beside its default; and
where a command that grades many notebooks grades them."""

from __future__ import annotations

import argparse
import dataclasses

from autograder.run import Limits, ResourceLimits

LIMIT_FLAGS = ("--timeout", "--cell-timeout", "--memory-gib", "--write-mib", "--no-sandbox")


def _limit_fields() -> dict[str, tuple[type, dataclasses.Field]]:
    """Each limit's flag: the dataclass whose field it sets (``Limits``, or its sandbox's ``ResourceLimits``)
    and that field, which declares the flag's help and unit (run/sandbox/limits.py)."""
    return {
        f.metadata["flag"]: (owner, f)
        for owner in (Limits, ResourceLimits)
        for f in dataclasses.fields(owner)
        if "flag" in f.metadata
    }


def _holder(limits: Limits, owner: type) -> Limits | ResourceLimits | None:
    """The object of ``limits`` that holds ``owner``'s fields: the limits, or their sandbox."""
    return limits if isinstance(limits, owner) else limits.sandbox


def add_limit_options(
    parser: argparse.ArgumentParser, defaults: Limits = Limits(), flags: tuple[str, ...] = LIMIT_FLAGS
) -> None:
    """Add the limits' options ``flags`` to ``parser``, with their fields' help and, as defaults, the values
    ``defaults`` holds, in the flags' units."""
    fields = _limit_fields()
    for flag in flags:
        owner, field = fields[flag]
        if field.name == "sandbox":  # a switch: the kernel runs without its sandbox
            parser.add_argument(flag, action="store_true", help=field.metadata["help"])
            continue
        default = getattr(_holder(defaults, owner), field.name) / field.metadata["unit"]
        parser.add_argument(flag, type=float, default=default, help=f"{field.metadata['help']} (default {default:g})")


def limits_from_args(args: argparse.Namespace, defaults: Limits = Limits()) -> Limits:
    """``defaults`` with the values of the limits' options (``add_limit_options``) that ``args`` holds."""
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


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """Where a command that grades many notebooks grades them: local Dask workers, or an existing cluster."""
    parser.add_argument("--workers", type=int, help="local Dask workers (default: one per core)")
    parser.add_argument("--scheduler", help="address of an existing Dask scheduler, e.g. tcp://host:8786")
