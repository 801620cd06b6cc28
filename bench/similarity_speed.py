"""Time of the similarity report for a class of 300 synthetic lab 2 submissions.

Each synthetic student answers every task of lab 2 with 3–12 statements drawn at random from a stock
of sharding code (``device_put`` with a layout, ``jnp`` arithmetic, a jitted function, a timing loop,
prints), with their own names and numbers; ``--copies`` of them are planted copies of another
student's notebook with every name they bind renamed, comments added and the code reformatted. The
notebooks are written to a temporary folder, then ``find_similar`` (reading every notebook, aligning
it with the template, tokenizing, comparing all pairs task by task) and the page are timed, and the
flagged pairs are compared with the planted ones.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "tests" / part) for part in ("support", "labs")]

from similarity_cases import disguise, random_answer  # noqa: E402

from autograder.authoring.known_grades import make_submission  # noqa: E402
from autograder.course.similarity import find_similar, similarity_html  # noqa: E402
from autograder.lab import load_lab  # noqa: E402

LAB = load_lab("lab2_three_ways")


def make_class(folder: Path, size: int, copies: int, rng: random.Random) -> set[tuple[str, str]]:
    """Write ``size`` submissions; return the planted (original, copy) pairs."""
    tasks = [t.id for t in LAB.tasks]
    answers, planted = {}, set()
    for i in range(size):
        student = f"s{i:03d}"
        if i >= size - copies:
            original = f"s{rng.randrange(size - copies):03d}"
            answers[student] = {t: disguise(a, rng) for t, a in answers[original].items()}
            planted.add(tuple(sorted((original, student))))
        else:
            answers[student] = {t: random_answer(rng) for t in tasks}
        make_submission(LAB, answers[student], folder / f"{student}.ipynb")
    return planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--copies", type=int, default=10, help="planted copies among them")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        planted = make_class(Path(folder), args.students, args.copies, random.Random(args.seed))
        paths = {p.stem: p for p in sorted(Path(folder).glob("*.ipynb"))}
        started, cpu = time.perf_counter(), time.process_time()
        report = find_similar(LAB.template, paths)
        page = similarity_html(report, LAB.id)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    flagged = {tuple(sorted((p.first, p.second))) for t in report.tasks for p in t.pairs}
    load = os.getloadavg()[0]
    print(
        f"{args.students} submissions, {len(LAB.tasks)} tasks: similarity report in {seconds:.2f} s "
        f"({cpu:.2f} s of CPU; load average {load:.1f}; {len(page) // 1024} KiB page)"
    )
    print(
        f"planted copies flagged: {len(planted & flagged)} of {len(planted)}; "
        f"other pairs flagged: {len(flagged - planted)}"
    )


if __name__ == "__main__":
    main()
