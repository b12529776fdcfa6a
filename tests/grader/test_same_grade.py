"""Same code, same grade: every file of the corpora gets one total whatever the student's identity.

Per-student cases differ in their values (``grader.case_draws``), never in what they catch. ``make test`` tries
IDENTITIES identities per file; ``benchmarks/same_grade.py`` tries 50 (benchmarks/README.md has the figures).
"""

import pytest

from grader import case_draws, cases, secret

from .spread import SECRET, corpus_files, identities, totals

IDENTITIES = 6


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_one_file_gets_one_total_under_every_identity(path):
    found = totals(path, IDENTITIES)
    assert len(found) == 1, f"{path.name}: totals {found}"


def test_every_kept_draw_catches_what_its_test_must_catch():
    for identity in identities(IDENTITIES):
        seed = secret.case_seed(SECRET, identity)
        by_test: dict = {}
        for case in cases.all_cases(seed):
            by_test.setdefault((case.function, case.group), []).append(case)
        for place, (test, draw) in enumerate(cases.DRAWS):
            caught, ambiguous = case_draws.caught_by(by_test[test])
            assert case_draws.required(place, draw) <= caught and not ambiguous, (identity, test)
