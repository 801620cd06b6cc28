"""Where things live: the package, the bundled course's notebooks, and the course folder a command runs in.

A course is a folder marked by ``autograder-course.toml`` (as ``pyproject.toml`` marks a project): its
labs' notebooks in ``solutions/`` and ``assignments/``, their graders in a folder of its own (``labs/``
unless the marker says otherwise), their known-grade submissions in ``tests/labs/``. Every command finds
it as git finds its repository, walking up from the current folder, unless ``$AUTOGRADER_COURSE`` names
it. The harness carries a course of its own, the bundled labs: in a checkout, the checkout itself; in an
installed wheel, ``autograder/bundled/``. A leaf module: a stage that needs a root imports no more.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_LABS = PACKAGE_DIR / "labs"
# The package every lab is imported under, by name: the labs are loaded as plugins (the lab model stands
# below the graders they hold, and never imports them by a statement of its own).
LABS_PACKAGE = "autograder.labs"
COURSE_FILE = "autograder-course.toml"
COURSE_ENVIRONMENT = "AUTOGRADER_COURSE"
BUNDLED_COPY = "bundled"  # in an installed wheel: the bundled course's notebooks, beside the package's code


class CourseFileError(ValueError):
    """A course's ``autograder-course.toml`` cannot be read."""


def bundled_root() -> Path:
    """Where the bundled labs' ``solutions/`` and ``assignments/`` are: ``$AUTOGRADER_ROOT``, else the
    checkout holding this package, else the copy an installed wheel carries."""
    if "AUTOGRADER_ROOT" in os.environ:
        return Path(os.environ["AUTOGRADER_ROOT"]).resolve()
    checkout = PACKAGE_DIR.parent
    if (checkout / COURSE_FILE).is_file() and (checkout / "solutions").is_dir():
        return checkout
    return PACKAGE_DIR / BUNDLED_COPY


@dataclass(frozen=True)
class Course:
    """A course folder: where its notebooks, its labs' graders and its known-grade submissions are."""

    root: Path
    labs_dir: Path
    harness: str  # the harness versions its graders are written for (a version specifier), or ""

    @property
    def is_bundled(self) -> bool:
        """The harness's own checkout: its labs are the bundled ones."""
        return self.labs_dir.resolve() == BUNDLED_LABS


def read_course(root: Path) -> Course:
    """The course whose ``autograder-course.toml`` is in ``root``."""
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
    """The nearest folder from ``start`` upwards holding ``autograder-course.toml``."""
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
