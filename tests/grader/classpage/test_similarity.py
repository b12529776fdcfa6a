"""The class page's similarity: deterministic, rarity-weighted, both shares, R with R, bounded in its own process.

The class is benchmarks/similarity_class.py's (40 independent Python hand-ins, 8 disguised copies, an R class);
benchmarks/similarity.py measures it whole, and the last test here runs it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.classpage import bounded_similarity, gradebook, similarity, stats
from grader.classpage.similarity import Code

REPO = Path(__file__).resolve().parents[3]
BENCHMARKS = REPO / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


similarity_class = _load("similarity_class")

# Scores of the benchmark's whole class, printed as JSON, with the files given in the order argv[1] says
SCORES = """import json, sys
sys.path.insert(0, sys.argv[2])
import similarity_class
from grader.classpage import similarity
files = {**similarity_class.python_class()[0], **similarity_class.r_class()[0]}
names = sorted(files, reverse=sys.argv[1] == "reversed")
codes = {name: similarity.Code(files[name][1], files[name][0]) for name in names}
print(json.dumps([[p.first, p.second, p.score, p.shares, p.first_spans] for p in similarity.ranking(codes)]))
"""


def _scores(seed: str, order: str) -> list:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-c", SCORES, order, str(BENCHMARKS)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_scores_are_the_same_under_any_hash_seed_and_any_order_of_files():
    first = _scores("1", "sorted")
    assert len(first) > 500  # most pairs share some common run: the comparison is not empty
    assert _scores("2", "reversed") == first  # every score, share and span, to the last bit


def _class() -> dict[str, Code]:
    files, _ = similarity_class.python_class()
    return {name: Code(source, language) for name, (language, source) in files.items() if name.startswith("py")}


def test_what_the_whole_class_shares_weighs_less_than_what_two_share():
    codes = _class()
    common = "\n\ndef shared_by_all(values):\n    total = 0\n    for item in values:\n        total += item * item\n" \
             "    return [total, len(values), min(values), max(values), sorted(values)]\n"
    rare = "\n\ndef shared_by_two(values):\n    out = {}\n    for key, item in enumerate(values):\n" \
           "        out[key] = (item - 1) ** 3 % 7\n    return sorted(out.items(), key=lambda kv: kv[1])\n"
    everyone = {name: Code(c.source + common) for name, c in codes.items()}
    two = dict(everyone, py00=Code(everyone["py00"].source + rare), py01=Code(everyone["py01"].source + rare))
    before = {(p.first, p.second): p.score for p in similarity.ranking(everyone)}
    after = {(p.first, p.second): p.score for p in similarity.ranking(two)}
    # the function every hand-in has moved no pair much; the one two hand-ins alone have moved theirs the most
    plain = {(p.first, p.second): p.score for p in similarity.ranking(codes)}
    assert max(abs(before.get(pair, 0) - plain.get(pair, 0)) for pair in before) < 0.01
    gains = {pair: after[pair] - before.get(pair, 0) for pair in after}
    assert max(gains, key=gains.get) == ("py00", "py01") and gains["py00", "py01"] > 0.1


def test_a_padded_copy_shows_both_shares_and_the_larger_scores():
    codes = _class()
    codes["padded"] = Code(similarity_class.dead_code(codes["py05"].source))
    pair = next(p for p in similarity.ranking(codes) if {p.first, p.second} == {"padded", "py05"})
    padded_share, original_share = pair.shares if pair.first == "padded" else pair.shares[::-1]
    assert original_share > 0.9 and padded_share < 0.7  # the copy's own padding is a third of it
    assert pair.score == max(pair.shares) >= similarity.DEFAULT_THRESHOLD


def test_r_is_compared_with_r_and_python_with_python():
    codes = _class()
    r_files, _ = similarity_class.r_class()
    some_r = next(source for language, source in r_files.values() if language == "r")
    # the same text under both languages: were they compared, it would be a perfect pair
    codes |= {"as_r": Code(some_r, "r"), "as_python": Code(some_r, "python"), "also_r": Code(some_r, "r")}
    pairs = {frozenset((p.first, p.second)) for p in similarity.ranking(codes)}
    assert frozenset(("as_r", "also_r")) in pairs
    assert not any("as_python" in pair and ("as_r" in pair or "also_r" in pair) for pair in pairs)


def test_the_starter_file_never_counts_as_shared_code_in_either_language():
    from grader import template

    python = {lang: Code(template.render(lang)) for lang in ("pt", "en")}
    r = {f"{lang}_r": Code(template.render_r(lang), "r") for lang in ("pt", "en")}
    assert similarity.ranking(python | r) == []


def test_past_its_time_the_helper_is_stopped_and_says_why():
    outcome = bounded_similarity.compare(_class(), similarity.DEFAULT_THRESHOLD, seconds=0.05)
    assert outcome.pairs is None and outcome.failure == "timeout"
    whole = bounded_similarity.compare(_class(), similarity.DEFAULT_THRESHOLD)
    assert whole.failure == "" and whole.pairs == similarity.close_pairs(_class())  # the same answer, from outside


@pytest.mark.timeout(300)
def test_the_benchmark_meets_its_figures():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "similarity.py")], capture_output=True, text=True,
                          timeout=240, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "Python class: 1128 pairs; at 0.8:" in done.stdout and "0 independent pairs flagged" in done.stdout


def _student(name: str, failures: dict[str, str]) -> gradebook.Student:
    tests = tuple(gradebook.TestRow("softmax", "hidden", test, False, output, ()) for test, output in failures.items())
    passing = (gradebook.TestRow("project", "hidden", "project: hidden cases", True, "", ()),)
    return gradebook.Student(name, 20.0, 30.0, "graded", "", False, (), {}, tests + passing)


def test_the_same_failures_are_told_apart_from_the_same_tests_failing_differently():
    told = "Hidden case with n=3, d_k=2: row 2 sums to 1.5, expected 1."
    a = _student("a", {"softmax: hidden cases": told})
    same = _student("b", {"softmax: hidden cases": told})
    other_values = _student("c", {"softmax: hidden cases": told.replace("1.5", "2.25")})
    other_words = _student("d", {"softmax: hidden cases": "Hidden case with n=3, d_k=2: returned None."})
    more = _student("e", {"softmax: hidden cases": told, "softmax: edge cases": told})
    assert stats.shared_failures(a, same) == stats.SharedFailures(1, True)
    assert stats.shared_failures(a, other_values) == stats.SharedFailures(1, False)
    assert stats.shared_failures(a, other_words) is None and stats.shared_failures(a, more) is None
    assert stats.shared_failures(_student("f", {}), _student("g", {})) is None  # passing everything is no evidence
