"""Where the harness lives: the package's folder and the project's root (``solutions/``, ``assignments/``).

A leaf module, so a stage that needs a root does not import the top package for its ``__file__``.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def project_root() -> Path:
    """Where ``solutions/`` and ``assignments/`` live: ``$AUTOGRADER_ROOT`` or this checkout."""
    return Path(os.environ.get("AUTOGRADER_ROOT", PACKAGE_DIR.parent)).resolve()
