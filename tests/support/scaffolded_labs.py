"""A course folder of a test's own, where `autograder new-lab` writes and labs are found."""

from __future__ import annotations

import sys
from pathlib import Path

import autograder.lab
import autograder.labs
from autograder.paths import COURSE_ENVIRONMENT, COURSE_FILE


def use_tmp_labs(monkeypatch, tmp_path: Path) -> Path:
    """``tmp_path`` is the course (its labs in ``tmp_path/labs``, imported as ``autograder.labs.<lab>``, its
    ``solutions/``, ``assignments/`` and ``tests/`` under it); the bundled labs are out of view."""
    (tmp_path / COURSE_FILE).write_text('[course]\nlabs = "labs"\n')
    (tmp_path / "labs").mkdir()
    (tmp_path / "no-bundled-labs").mkdir()
    monkeypatch.setenv(COURSE_ENVIRONMENT, str(tmp_path))
    monkeypatch.setattr(autograder.lab, "BUNDLED_LABS", tmp_path / "no-bundled-labs")
    monkeypatch.setattr(autograder.labs, "__path__", list(autograder.labs.__path__))
    for name in [m for m in sys.modules if m.startswith("autograder.labs.")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path
