"""Same code, same grade: every question-1 file of the test corpora under 50 identities; prints each file's totals.

    .venv/bin/python benchmarks/same_grade.py [IDENTITIES] [--r-identities N]

The files: tests/grader/corpora/{submissions,variants,outside,r_corpus} (not the attacks) and
tests/grader/corpora/uncatalogued, the mistakes no catalogue holds (value-, shape- and state-dependent ones, in Python
and R). A Python file is judged in this process, loaded afresh per identity; an R file is graded by the grader
(tests/grader/corpora/spread.py). Only the cases vary between identities. Prints the CPU time of one identity's cases
(drawn, with each case's expected output and tolerance: what every grading pays before it calls the student's code).
Exit 1 if any file gets more than one total. ``--r-identities``: fewer identities for the R files, each of whose
gradings starts R (about a second each on the 2-core machine).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader import secret  # noqa: E402
from grader.functions import cases  # noqa: E402
from tests.grader.corpora.spread import SECRET, _judged, corpus_files, identities, totals  # noqa: E402


def cases_seconds(count: int) -> float:
    """CPU seconds per identity to draw its cases and compute their expected outputs and tolerances."""
    seeds = [secret.case_seed(SECRET, f"timing{i}") for i in range(count)]
    start = time.process_time()
    for seed in seeds:
        _judged(seed)
    return (time.process_time() - start) / count


def main(argv: list[str]) -> int:
    r_count = None
    if "--r-identities" in argv:
        at = argv.index("--r-identities")
        r_count = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    count = int(argv[0]) if argv else 50
    per_identity = cases_seconds(5)
    start, varying = time.process_time(), 0
    files = corpus_files()
    for path in files:
        found = totals(path, r_count if path.suffix == ".R" and r_count else count)
        spread = ", ".join(f"{t:g} ({len(ids)})" for t, ids in sorted(found.items()))
        varying += len(found) > 1
        print(f"{path.parent.name}/{path.name:<40} {spread}", flush=True)
    total_cases = len(cases.all_cases(secret.case_seed(SECRET, identities(1)[0])))
    r_note = f" ({r_count} for the R files)" if r_count else ""
    print(f"{varying} of {len(files)} files get more than one total under {count} identities{r_note}; "
          f"{time.process_time() - start:.0f} s CPU in this process; one identity's {total_cases} cases: "
          f"{per_identity * 1000:.0f} ms CPU to draw and to compute what each should give")
    return 1 if varying else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
