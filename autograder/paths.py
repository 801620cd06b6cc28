"""Where things live: the package, the bundled course's notebooks, and the course folder a command runs in,
found as git finds its repository unless ``$AUTOGRADER_COURSE`` names it. A leaf module: a stage that needs
a root imports no more."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_LABS = PACKAGE_DIR / "labs"
# The labs are loaded by name as plugins: the lab model stands below the graders they hold.
LABS_PACKAGE = "autograder.labs"
COURSE_FILE = "autograder-course.toml"
COURSE_ENVIRONMENT = "AUTOGRADER_COURSE"
BUNDLED_COPY = "bundled"  # in an installed wheel: the bundled course's notebooks, beside the package's code


class CourseFileError(ValueError):
    """A course's ``autograder-course.toml`` cannot be read."""


def bundled_root() -> Path:
    """Where the bundled labs' notebooks are: ``$AUTOGRADER_ROOT``, the checkout, or the wheel's copy."""
    if "AUTOGRADER_ROOT" in os.environ:
        return Path(os.environ["AUTOGRADER_ROOT"]).resolve()
    checkout = PACKAGE_DIR.parent
    if (checkout / COURSE_FILE).is_file() and (checkout / "solutions").is_dir():
        return checkout
    return PACKAGE_DIR / BUNDLED_COPY


@dataclass(frozen=True)
class Course:
    root: Path
    labs_dir: Path
    harness: str  # the harness versions its graders are written for (a version specifier), or ""

    @property
    def is_bundled(self) -> bool:
        return self.labs_dir.resolve() == BUNDLED_LABS


def read_course(root: Path) -> Course:
    marker = root / COURSE_FILE
    try:
        table = tomllib.loads(marker.read_text(encoding="utf-8")).get("course", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CourseFileError(f"{marker} cannot be read: {exc}") from exc
    labs = table.get("labs", "labs")
    harness = table.get("harness", "")
    if not isinstance(labs, str) or not isinstance(harness, str):
        raise CourseFileError(f"{marker}: [course] labs and harness are strings")
    return Course(root.resolve(), (root / labs).resolve(), harness)


def find_course(start: Path) -> Path | None:
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / COURSE_FILE).is_file():
            return folder
    return None


def current_course() -> Course | None:
    """The course commands work on: ``$AUTOGRADER_COURSE``, else the one the current folder is in."""
    named = os.environ.get(COURSE_ENVIRONMENT)
    if named:
        root = Path(named)
        if not (root / COURSE_FILE).is_file():
            raise CourseFileError(f"${COURSE_ENVIRONMENT} is {named}, which has no {COURSE_FILE}")
        return read_course(root)
    found = find_course(Path.cwd())
    return read_course(found) if found else None
