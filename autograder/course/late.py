"""Late submissions: a due date and a policy (percent per day or hour started, a cap, a grace period), and
when each student submitted (docs/instructors.md, "Late penalties"). The penalty is a percent of the
student's score after overrides, so it never takes more than was earned. Times without a UTC offset are
the grading machine's local time.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

from autograder.grading import GradeResult, LatePenalty, write_atomically

POLICY_FILE = "late_policy.json"  # in OUT: the policy every later write applies, until replaced
EXTENSIONS_FILE = "extensions.csv"  # in OUT: student, due, comment — a later due date for some students
DURATION_UNITS = {
    "s": 1,
    "sec": 1,
    "m": 60,
    "min": 60,
    "h": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
}
FROM_METADATA = "Gradescope's created_at"
FROM_MTIME = "the file's modification time"


class LatePolicyError(ValueError):
    """A due date or policy that cannot be read; the message says what was expected."""


@dataclass(frozen=True)
class LatePolicy:
    due: datetime  # timezone-aware
    percent: float  # per unit started
    unit: str = "day"  # "day" or "hour"
    cap: float = 100.0  # most percent taken off
    grace_seconds: float = 0.0


def parse_due(text: str) -> datetime:
    """``2026-12-01T23:59`` (local time) or with an offset, ``2026-12-01T23:59-08:00`` / ``...Z``."""
    try:
        due = datetime.fromisoformat(text.strip())
    except ValueError:
        raise LatePolicyError(
            f"--due {text!r}: expected a date and time like 2026-12-01T23:59 "
            "(optionally with an offset, 2026-12-01T23:59-08:00)"
        ) from None
    return due if due.tzinfo else due.astimezone()


def parse_rate(text: str) -> tuple[float, str]:
    """``10%/day`` or ``2%/hour`` -> (10.0, "day")."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%\s*(?:/|per)\s*(day|hour)\s*", text)
    if not match:
        raise LatePolicyError(f"--late-penalty {text!r}: expected a percent per day or hour, like 10%/day or 2%/hour")
    return float(match.group(1)), match.group(2)


def parse_percent(text: str) -> float:
    """``50%`` (or ``50``) -> 50.0, between 0 and 100."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%?\s*", text)
    if not match or float(match.group(1)) > 100:
        raise LatePolicyError(f"--late-cap {text!r}: expected a percent between 0% and 100%, like 50%")
    return float(match.group(1))


def parse_duration(text: str) -> float:
    """``15m``, ``2h``, ``1d``, ``90s`` (or a number of seconds) -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not match or (match.group(2) and match.group(2) not in DURATION_UNITS):
        raise LatePolicyError(f"--grace {text!r}: expected a duration like 15m, 2h or 1d")
    return float(match.group(1)) * DURATION_UNITS.get(match.group(2) or "s", 1)


def format_duration(seconds: float) -> str:
    """A short human duration: ``1 d 2 h``, ``3 h 5 min``, ``12 min``, ``40 s``."""
    seconds = abs(seconds)
    days, rest = divmod(int(round(seconds)), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min" if minutes else f"{secs} s"


def build_policy(due: str, late_penalty: str, cap: str = "100%", grace: str = "0") -> LatePolicy:
    percent, unit = parse_rate(late_penalty)
    return LatePolicy(parse_due(due), percent, unit, parse_percent(cap), parse_duration(grace))


def save_policy(out: Path, policy: LatePolicy | None) -> None:
    path = out / POLICY_FILE
    if policy is None:
        path.unlink(missing_ok=True)
        return
    data = asdict(policy) | {"due": policy.due.isoformat()}
    write_atomically(path, json.dumps(data, indent=1) + "\n")


def load_policy(out: Path) -> LatePolicy | None:
    path = out / POLICY_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LatePolicy(**data | {"due": datetime.fromisoformat(data["due"])})
    except (ValueError, TypeError, KeyError) as exc:
        raise LatePolicyError(f"{path} cannot be read ({exc}); give the policy again with --due") from None


def submission_time(
    path: Path | None, created_at=None, lms_note: str | None = None
) -> tuple[datetime | None, str | None]:
    """When a student submitted, and from where: Gradescope's metadata (``:created_at``, a YAML timestamp or a
    string), the file's mtime, or an LMS's note."""
    if isinstance(created_at, str):
        with contextlib.suppress(ValueError):  # 3.11's reads Gradescope's nanoseconds, " +0000" and ``Z``
            created_at = datetime.fromisoformat(created_at.strip())
    if isinstance(created_at, datetime):
        return created_at if created_at.tzinfo else created_at.astimezone(), FROM_METADATA
    if lms_note is not None:
        return None, lms_note
    if path is not None and path.exists():
        return datetime.fromtimestamp(path.stat().st_mtime).astimezone(), FROM_MTIME
    return None, None


def late_penalty(policy: LatePolicy, submitted_at: datetime | None, source: str | None, score: float) -> LatePenalty:
    """What a submission made at ``submitted_at`` loses from ``score`` under ``policy``."""
    due = policy.due.isoformat()
    if submitted_at is None:
        known = f" ({source})" if source else ""
        return LatePenalty(
            due, None, source or "unknown", 0.0, 0.0, 0.0, f"the submission time is unknown{known}: no late penalty"
        )
    late = (submitted_at - policy.due).total_seconds()
    when = f"submitted {submitted_at.isoformat(timespec='seconds')} ({source})"

    def penalty(percent: float, points: float, reason: str) -> LatePenalty:
        return LatePenalty(due, submitted_at.isoformat(), source, late, percent, points, reason)

    if late <= 0:
        return penalty(0.0, 0.0, f"on time: {when}")
    if late <= policy.grace_seconds:
        grace = format_duration(policy.grace_seconds)
        return penalty(0.0, 0.0, f"{format_duration(late)} late, within the {grace} grace period: no penalty; {when}")
    units = math.ceil(late / DURATION_UNITS[policy.unit])
    if not policy.percent:
        return penalty(0.0, 0.0, f"{format_duration(late)} late (no penalty: 0% per {policy.unit}); {when}")
    percent = min(policy.cap, units * policy.percent)
    points = round(score * percent / 100, 2)
    capped = " (the cap)" if percent < units * policy.percent else ""
    plural = "s" if units != 1 else ""
    reason = (
        f"{format_duration(late)} late, {units} {policy.unit}{plural} at {policy.percent:g}% per "
        f"{policy.unit}: −{percent:g}%{capped} = −{points:g} points; {when}"
    )
    return penalty(percent, points, reason)


@dataclass(frozen=True)
class Extension:
    """A later due date for one student."""

    due: datetime
    comment: str


def read_extensions(out: Path, students: set[str]) -> dict[str, Extension]:
    """``OUT/extensions.csv`` by student; ``LatePolicyError`` names every line with an unknown student or due date."""
    path = out / EXTENSIONS_FILE
    if not path.is_file():
        return {}
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))
    header = [name.strip() for name in reader.fieldnames or []]
    if header and not {"student", "due"} <= set(header):
        raise LatePolicyError(f"{path}: expected the columns student, due, comment; found {', '.join(header)}")
    extensions, problems = {}, []
    for row in reader:
        row = {(k or "").strip(): (v or "").strip() if isinstance(v, str) else "" for k, v in row.items()}
        if not row.get("student") and not row.get("due"):
            continue
        where = f"{path} line {reader.line_num}"
        try:
            due = parse_due(row.get("due", ""))
        except LatePolicyError as exc:
            problems.append(f"{where}: {str(exc).replace('--due', 'due')}")
            continue
        if row["student"] not in students:
            problems.append(f"{where}: unknown student {row['student']!r} (no submission of that name)")
            continue
        extensions[row["student"]] = Extension(due, row.get("comment", ""))
    if problems:
        raise LatePolicyError("\n".join(problems))
    return extensions


def apply_late(result: GradeResult, policy: LatePolicy | None, extension: Extension | None = None) -> GradeResult:
    """``result`` with the penalty of ``policy``, from its raw score and the student's extended due date if any."""
    if policy is None:
        return replace(result, late=None)
    if extension is not None:
        policy = replace(policy, due=extension.due)
    submitted = datetime.fromisoformat(result.submitted_at) if result.submitted_at else None
    penalty = late_penalty(policy, submitted, result.submitted_time_source, result.raw_score)
    if extension is not None:
        note = f"due date extended to {extension.due.isoformat(timespec='minutes')}"
        note += f" ({extension.comment})" if extension.comment else ""
        penalty = replace(penalty, reason=f"{note}; {penalty.reason}")
    return replace(result, late=penalty)


def with_submission_time(
    result: GradeResult, path: Path | None, created_at=None, lms_note: str | None = None
) -> GradeResult:
    """``result`` with ``submission_time`` recorded, unless it has a time already."""
    if result.submitted_at is not None:
        return result
    moment, source = submission_time(path, created_at, lms_note)
    if moment is None and source is None:
        return result
    return replace(result, submitted_at=moment.isoformat() if moment else None, submitted_time_source=source)
