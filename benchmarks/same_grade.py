"""Same code, same grade: every question-1 file of the test corpora under 50 identities; prints each file's totals.

    .venv/bin/python benchmarks/same_grade.py [IDENTITIES]

The judging runs in this process on the files of tests/grader/{submissions,variants,outside} (not the attacks):
only the cases vary between identities (tests/grader/spread.py). Exit 1 if any file gets more than one total.
With ``--first-draw`` every test keeps its first draw (the catalogue's filter off), the baseline.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader import case_draws  # noqa: E402
from tests.grader.spread import corpus_files, totals  # noqa: E402


def main(argv: list[str]) -> int:
    first_draw = "--first-draw" in argv
    argv = [a for a in argv if a != "--first-draw"]
    count = int(argv[0]) if argv else 50
    if first_draw:
        case_draws.ATTEMPTS = 1
    start, varying = time.process_time(), 0
    files = corpus_files()
    for path in files:
        found = totals(path, count)
        spread = ", ".join(f"{t:g} ({len(ids)})" for t, ids in sorted(found.items()))
        varying += len(found) > 1
        print(f"{path.parent.name}/{path.name:<40} {spread}")
    print(f"{varying} of {len(files)} files get more than one total under {count} identities "
          f"({'first draw kept' if first_draw else 'draws kept by the catalogue'}); "
          f"{time.process_time() - start:.0f} s CPU")
    return 1 if varying else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
