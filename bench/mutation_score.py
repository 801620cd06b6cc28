"""Each lab's mutation score: killed ÷ (killed + survivors not recorded as equivalent), from
``autograder mutants``.

It grades the mutants of each lab named (default: every lab) on a local Dask cluster and prints one line
per lab, or, with ``--from DIR``, reads the reports ``autograder mutants LAB --json DIR/LAB.json`` wrote
(a lab without one there is graded). ``--out DIR`` keeps each report it grades. It reports, it never
asserts: the exit status is 0 whatever the scores.

    python bench/mutation_score.py                        # every lab: about 10 min per lab here
    python bench/mutation_score.py lab2_three_ways --from reports/
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def report_of(lab_id: str, saved: Path | None, out: Path | None, workers: int | None) -> dict:
    if saved is not None and (saved / f"{lab_id}.json").is_file():
        return json.loads((saved / f"{lab_id}.json").read_text())
    from autograder.mutation import MutantGradingOptions, mutation_report

    report = mutation_report(lab_id, options=MutantGradingOptions(workers=workers)).to_dict()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{lab_id}.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def main() -> int:
    from autograder.run import configure_grader_process

    configure_grader_process()
    from autograder.lab import lab_ids

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="lab ids (default: every lab)")
    parser.add_argument("--from", dest="saved", type=Path, help="a folder of reports (LAB.json) to read")
    parser.add_argument("--out", type=Path, help="keep each report graded here as LAB.json")
    parser.add_argument("--workers", type=int, help="local Dask workers (default: one per core)")
    args = parser.parse_args()
    rows = []
    for lab_id in args.labs or lab_ids():
        report = report_of(lab_id, args.saved, args.out, args.workers)
        counts = {
            key: sum(t[key] for t in report["tasks"])
            for key in ("made", "killed", "survived", "equivalent", "not_graded")
        }
        rows.append((lab_id, counts, report["score"]))
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'lab':<26} {'made':>5} {'killed':>7} {'survived':>9} {'equivalent':>11} {'not graded':>11}  score")
    for lab_id, counts, score in rows:
        print(
            f"{lab_id:<26} {counts['made']:>5} {counts['killed']:>7} {counts['survived']:>9} "
            f"{counts['equivalent']:>11} {counts['not_graded']:>11}  " + ("-" if score is None else f"{score:.0%}")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
