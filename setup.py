"""The wheel carries the bundled course: an installed harness grades, tests and hands out its bundled labs
with no checkout. The build copies the labs' notebooks (solutions/, assignments/) and their known-grade
submissions (tests/labs/) into the package's ``bundled/`` folder, where ``autograder.paths.bundled_root``
finds them; everything else is declared in pyproject.toml."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLED = {"solutions": "*/*.ipynb", "assignments": "*/*.ipynb", "tests/labs": "*_submissions.py"}


class BuildWithBundledCourse(build_py):
    def run(self):
        super().run()
        if self.editable_mode:  # an editable install runs from the checkout, which has them
            return
        target = Path(self.build_lib) / "autograder" / "bundled"
        for folder, pattern in BUNDLED.items():
            for path in sorted((HERE / folder).glob(pattern)):
                copy = target / path.relative_to(HERE)
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_bytes(path.read_bytes())


setup(cmdclass={"build_py": BuildWithBundledCourse})
