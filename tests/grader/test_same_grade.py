"""Same code, same grade: every file of the corpora gets one total whatever the student's identity.

Every student's cases have the same shapes, edge cases and planted features (``grader.functions.cases``); only
their values differ. ``make test`` tries IDENTITIES identities per Python file (judged in this process) and
R_IDENTITIES per R file (each a real grading, R started afresh: one each of Moodle's, Canvas's and a plain
entry's identities); ``benchmarks/same_grade.py`` tries 50 for every file (benchmarks/README.md has the figures).
"""

import pytest

from grader import secret
from grader.functions import cases
from grader.functions.contract import DEFAULT_SEED

from .corpora.catches import caught_by
from .corpora.spread import SECRET, by_total, corpus_files, graded_totals, identities, totals

IDENTITIES = 6
R_IDENTITIES = 3  # one of each kind identities() makes: Moodle's, Canvas's and a plain entry's
PY_FILES = [path for path in corpus_files() if path.suffix == ".py"]
R_FILES = [path for path in corpus_files() if path.suffix == ".R"]


def corpus_id(path) -> str:
    return f"{path.parent.name}/{path.name}"


def _by_test(seed: int) -> dict:
    """The seeded cases of ``seed`` by test (the worked example's are everyone's)."""
    found: dict = {}
    for case in cases.all_cases(seed):
        if case.group != "worked":
            found.setdefault((case.function, case.group), []).append(case)
    return found


@pytest.fixture(scope="module")
def r_totals() -> dict:
    """Every R file's totals under R_IDENTITIES identities, graded in one pool (tests/grader/corpora/spread.py)."""
    names = identities(R_IDENTITIES)
    return {path: by_total(names, scores) for path, scores in graded_totals(R_FILES, names).items()}


@pytest.mark.parametrize("path", PY_FILES, ids=corpus_id)
def test_one_python_file_gets_one_total_under_every_identity(path):
    found = totals(path, IDENTITIES)
    assert len(found) == 1, f"{path.name}: totals {found}"


@pytest.mark.parametrize("path", R_FILES, ids=corpus_id)
def test_one_r_file_gets_one_total_under_every_identity(r_totals, path):
    assert len(r_totals[path]) == 1, f"{path.name}: totals {r_totals[path]}"


def test_every_identity_has_the_same_sizes_and_edge_cases_with_values_of_its_own():
    public = cases.all_cases()
    for identity in identities(3):
        mine = cases.all_cases(secret.case_seed(SECRET, identity))
        assert [(c.function, c.group, c.label, c.kwargs) for c in mine] == \
               [(c.function, c.group, c.label, c.kwargs) for c in public]
        assert any(c.group != "worked" and c.function != "causal_mask"
                   and not (c.args[0] == p.args[0]).all() for c, p in zip(mine, public, strict=True))


def test_every_identity_catches_the_same_catalogued_variants_as_the_public_seed_unambiguously():
    public = {test: caught_by(found) for test, found in _by_test(DEFAULT_SEED).items()}
    assert not any(ambiguous for _, ambiguous in public.values())
    assert all(public[test][0] for test in public if test[0] != "project")  # project has no catalogued mistake
    for identity in identities(IDENTITIES):
        mine = _by_test(secret.case_seed(SECRET, identity))
        for test, found in mine.items():
            assert caught_by(found) == public[test], (identity, test)
