"""Question 2: the module corpus under tests/grader/corpora/modules/, graded in the sandbox as the issue's rules say.

Each corpus file says its expected verdict on its second line: ``# expect: full``, ``# expect: mistakes=ID,...``
(loses points, names exactly these), or ``# expect: lost=NAME:GROUP,...`` (loses exactly these tests, names none).
"""

import ast
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grader import rubric
from grader.grade import GradeConfig
from grader.module import diagnosis, runner
from grader.module.checks import SAME, first_leak, moved
from grader.module.contract import MODULE_MISTAKE_IDS
from grader.sandbox.limits import Limits

from ..conftest import CORPORA, SUBMISSIONS

MODULES = CORPORA / "modules"
FILES = sorted(MODULES.glob("*.py"))
SEEDS = range(4)  # identities per correct module (every one of them: the layouts, not the seeds, are what varies)
CONFIG = GradeConfig(limits=Limits(call_timeout=10.0))  # a loaded machine must not turn a slow call into a failure


def expectation(path: Path) -> tuple[str, set]:
    kind, _, values = re.match(r"# expect: (\S+)", path.read_text().splitlines()[1]).group(1).partition("=")
    return kind, set(filter(None, values.split(",")))


def test_the_corpus_has_fifteen_correct_layouts_and_names_every_module_mistake():
    assert len([p for p in FILES if expectation(p)[0] == "full"]) >= 15
    named = set().union(*(expectation(p)[1] for p in FILES if expectation(p)[0] == "mistakes"))
    assert set(MODULE_MISTAKE_IDS) <= named


@pytest.mark.parametrize("path", [p for p in FILES if expectation(p)[0] == "full"], ids=lambda p: p.stem)
def test_every_correct_module_gets_full_marks_on_several_identities(grade, path, spawner):
    for seed in SEEDS:
        result = grade(path, GradeConfig(seed=seed, limits=CONFIG.limits), spawner=spawner)
        failed = [t.feedback for t in result.tests if not t.passed]
        assert result.full_marks and not failed and result.mistakes == [], (seed, failed)
        assert {t.function for t in result.tests} >= {"MultiHeadAttention"}


@pytest.mark.parametrize("path", [p for p in FILES if expectation(p)[0] != "full"], ids=lambda p: p.stem)
def test_each_bug_loses_points_and_is_named_exactly(grade, path, spawner):
    kind, expected = expectation(path)
    result = grade(path, CONFIG, spawner=spawner)
    assert any(not t.passed for t in result.tests)  # build_model's points are extra: a loss there is below its own
    assert result.score < sum(t.max_score for t in result.tests)
    if kind == "mistakes":
        assert set(result.mistakes) == expected
        for test in result.tests:  # a name only where that test failed, each with its fix
            assert test.passed or not test.mistakes or set(test.mistakes) <= expected
            assert all(f"[{m}]" in test.feedback for m in test.mistakes)
    else:
        assert result.mistakes == []
        assert {f"{t.function}:{t.group}" for t in result.tests if not t.passed} == expected


@pytest.mark.parametrize("lang, leak", [("en", "The first leaking position is 1."),
                                        ("pt", "A primeira posição que vaza é a 1.")])
@pytest.mark.parametrize("stem, mistake, fix", [
    ("bug_view_no_transpose", "heads-mixed-by-view", "transpose(1, 2)"),
    ("bug_mha_mask_inverted", "mask-convention-inverted", "~mask"),
])
def test_view_without_transpose_and_the_inverted_mask_are_named_with_the_leak_in_both_languages(
        run_grader, tmp_path, stem, mistake, fix, lang, leak):
    out = tmp_path / "r.json"
    proc = run_grader(MODULES / f"{stem}.py", "--lang", lang, "--json", out)
    assert proc.returncode == 1, proc.stderr
    tests = [t for t in json.loads(out.read_text())["tests"] if t["name"].startswith("MultiHeadAttention")]
    causal = next(t for t in tests if t["name"].startswith("MultiHeadAttention: caus"))
    assert causal["status"] == "failed" and causal["extra_data"]["mistakes"] == [mistake]
    assert f"[{mistake}]" in causal["output"]
    # the mistake explained once, at the function's first failing test, the leak where it is found
    said = " ".join(t["output"] for t in tests)
    assert said.count(fix) >= 1 and leak in said


@pytest.mark.parametrize("lang, phrase", [("en", "because your MultiHeadAttention does"),
                                          ("pt", "porque a sua MultiHeadAttention muda")])
def test_a_model_that_leaks_only_through_its_module_is_told_so(run_grader, tmp_path, lang, phrase):
    out = tmp_path / "r.json"
    proc = run_grader(MODULES / "bug_model_through_module.py", "--lang", lang, "--json", out)
    assert proc.returncode == 1, proc.stderr
    tests = {t["name"].split(" (")[0]: t for t in json.loads(out.read_text())["tests"]}
    model = next(t for name, t in tests.items() if name.startswith("build_model: caus"))
    module = next(t for name, t in tests.items() if name.startswith("MultiHeadAttention: caus"))
    assert module["status"] == model["status"] == "failed"
    assert phrase in model["output"] and phrase not in module["output"]


def test_a_model_that_leaks_by_itself_is_not_blamed_on_its_module(grade, spawner):
    result = grade(MODULES / "bug_model_leaks.py", CONFIG, spawner=spawner)
    model = next(t for t in result.tests if t.function == "build_model" and t.group == "causal")
    assert not model.passed and "because your" not in model.feedback


def test_a_module_that_cannot_be_mapped_is_graded_on_the_weight_free_checks_and_told_the_shapes(grade, spawner):
    result = grade(MODULES / "bug_unmappable_low_rank.py", CONFIG, spawner=spawner)
    worked = next(t for t in result.tests if t.group == "worked")
    assert "down (4, 4, 2)" in worked.feedback and "up (4, 2, 4)" in worked.feedback
    assert "3·d_model outputs" in worked.feedback
    assert all(t.passed for t in result.tests if t.group not in ("worked", "hidden"))


@pytest.mark.parametrize("leaks, named", [
    ({"grad": 2}, "leaks-future"),  # only when really trained (gradients on)
    ({"train": 2, "grad": 2}, "mask-only-in-eval"),
    ({"eval": 1}, "mask-only-in-training"),
    ({"eval": 1, "train": 1, "grad": 1}, "leaks-future"),
])
def test_a_leak_is_named_by_the_runs_it_shows_in(leaks, named):
    assert diagnosis.diagnose(diagnosis.Evidence(leak=leaks))[("MultiHeadAttention", "causal")] == (named,)


def test_a_mask_not_cut_is_told_from_torchs_size_error_only_for_a_longer_mask():
    error = "The size of tensor a (16) must match the size of tensor b (3) at non-singleton dimension 3"
    assert runner.not_cut(error, 3) and not runner.not_cut(error, 16) and not runner.not_cut(error, 5)
    assert not runner.not_cut("shape '[1, 3]' is invalid for input of size 16", 3)
    named = diagnosis.diagnose(diagnosis.Evidence(mask_not_cut=True))
    assert {named[("MultiHeadAttention", g)] for g in ("worked", "causal", "lengths")} == {("mask-not-cut",)}


def test_the_rubric_chooses_the_contract_and_refuses_an_unknown_one(grade, tmp_path):
    assert rubric.load().contract == "auto"
    assert [g for n, g, _ in rubric.load().module_tests() if n == "MultiHeadAttention"][:3] == [
        "worked", "hidden", "causal"]
    bad = tmp_path / "r.toml"
    bad.write_text('[options]\ncontract = "essay"\n')
    with pytest.raises(ValueError, match="contract"):
        rubric.load(bad)
    forced = tmp_path / "m.toml"
    forced.write_text('[options]\ncontract = "module"\n')
    result = grade(SUBMISSIONS / "correct_numpy.py",
                   GradeConfig(rubric=rubric.load(forced)))
    assert not result.full_marks and "does not define MultiHeadAttention" in result.tests[0].feedback


def test_a_function_failing_only_through_the_students_softmax_says_so(grade):
    result = grade(SUBMISSIONS / "mistake_softmax_wrong_axis.py", CONFIG)
    weights = [t for t in result.tests if t.function == "attention_weights" and not t.passed]
    assert weights and all("fails because your softmax does" in t.feedback for t in weights)
    softmax = [t for t in result.tests if t.function == "softmax" and not t.passed]
    assert softmax and all("fails because" not in t.feedback for t in softmax)


@pytest.mark.parametrize("lang, word", [("en", "optional"), ("pt", "opcional")])
def test_the_module_template_shows_the_class_and_the_model_and_grades_as_not_implemented(run_grader, tmp_path, lang,
                                                                                         word):
    proc = run_grader("--template", "--contract", "module", "--lang", lang)
    assert proc.returncode == 0 and "class MultiHeadAttention(nn.Module):" in proc.stdout
    assert "def build_model(vocab_size, block_size):" in proc.stdout and word in proc.stdout
    starter = tmp_path / "student.py"
    starter.write_text(proc.stdout)
    graded = run_grader(starter, "--lang", lang)
    assert graded.returncode == 1 and "NotImplementedError" in graded.stdout


def _colab_notebook(code: str) -> str:
    """A notebook as Colab downloads it: set-up lines, the class in a cell of its own, a cell reading Drive."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("!pip install -q torch\n%matplotlib inline"),
                nbformat.v4.new_markdown_cell("# Questão 2"),
                nbformat.v4.new_code_cell(code),
                nbformat.v4.new_code_cell("text = open('/content/drive/MyDrive/input.txt').read()")]
    return nbformat.writes(nb)


def test_module_hand_ins_found_by_the_intake_get_full_marks_in_a_batch_with_the_secret(run_grader, tmp_path):
    """Question 2 through the intake: a .py, a Colab notebook and a folder that also holds a function of
    question 1, beside a question 1 student, graded by the batch command with each student's cases from the secret."""
    batch = tmp_path / "class"
    (batch / "carla").mkdir(parents=True)
    shutil.copy(MODULES / "correct_nanogpt.py", batch / "ana.py")
    shutil.copy(SUBMISSIONS / "correct_numpy.py", batch / "bia.py")
    shutil.copy(MODULES / "correct_with_model.py", batch / "carla" / "model.py")
    (batch / "carla" / "lecture_notes.py").write_text(  # question 1's softmax, kept beside the module
        "import numpy as np\n\n\ndef softmax(S):\n    e = np.exp(S - S.max(axis=1, keepdims=True))\n"
        "    return e / e.sum(axis=1, keepdims=True)\n")
    (batch / "dani.ipynb").write_text(_colab_notebook((MODULES / "correct_with_model.py").read_text()))
    csv = tmp_path / "grades.csv"
    proc = run_grader(batch, "--csv", csv, "--jobs", 2, "--timeout", 10, "--lang", "en",
                      env={"GRADER_SECRET": "5e" * 32}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    book = pd.read_csv(csv, keep_default_na=False).set_index("student")
    assert list(book.loc["bia", ["total", "max_total", "status"]]) == [30.0, 30.0, "graded"]
    for student, points in (("ana", (12, 0)), ("carla", (12, 4)), ("dani", (12, 4))):
        row = book.loc[student]
        assert (row["status"], row["MultiHeadAttention"], row["build_model"]) == ("graded", *points), student
        assert row["max_total"] == points[0], student  # the module's maximum (build_model's points are extra)
        result = json.loads((tmp_path / "grades_results" / f"{student}.json").read_text())
        assert result["score"] == sum(points) and result["extra_data"]["max_score"] == points[0], result["output"]
        assert result["extra_data"]["public_seed"] is False
    carla = json.loads((tmp_path / "grades_results" / "carla.json").read_text())["output"]
    assert carla.startswith("Graded model.py,"), carla
    dani = json.loads((tmp_path / "grades_results" / "dani.json").read_text())["output"]
    assert "cell 3, line 1" in dani and "FileNotFoundError" in dani, dani


def test_a_module_that_runs_only_in_float32_is_judged_there_and_told_so(grade, spawner):
    result = grade(MODULES / "correct_float32_only.py", CONFIG, spawner=spawner)
    worked = next(t for t in result.tests if t.group == "worked")
    assert worked.passed and "graded in float32" in worked.feedback and "expected scalar type" in worked.feedback
    dtypes = next(t for t in result.tests if t.group == "dtypes")
    assert not dtypes.passed and "forward(x) of MultiHeadAttention(16, 4)" in dtypes.feedback


def test_a_constructor_that_fails_is_told_as_the_call_that_built_it(grade, tmp_path):
    bad = tmp_path / "swapped.py"
    bad.write_text("import torch.nn as nn\n\n\nclass MultiHeadAttention(nn.Module):\n"
                   "    def __init__(self, n_heads, d_model):\n        super().__init__()\n"
                   "        assert d_model % n_heads == 0, 'd_model must divide by n_heads'\n")
    result = grade(bad, CONFIG)
    worked = next(t for t in result.tests if t.group == "worked")
    assert "building MultiHeadAttention(4, 2) failed" in worked.feedback and "AssertionError" in worked.feedback
    assert "MultiHeadAttention(d_model, n_heads)" in worked.feedback


def test_a_file_with_the_module_and_all_seven_functions_is_graded_on_both_and_says_so(grade, tmp_path):
    both = tmp_path / "both.py"
    both.write_text((SUBMISSIONS / "correct_numpy.py").read_text() + "\n\n"
                    + (MODULES / "correct_llama.py").read_text())
    result = grade(both, CONFIG)
    assert {t.function for t in result.tests} >= {"MultiHeadAttention", "softmax", "multi_head_attention"}
    assert result.full_marks and any("graded on both questions" in n for n in result.notes)


def test_runs_move_beyond_float_noise_relative_to_their_size_and_matching_nans_do_not():
    a = np.full((3, 4), 100.0)
    assert not moved(a, a + 0.5 * SAME * 100) and moved(a, a + 2 * SAME * 100)
    small = np.full((3, 4), 1e-3)  # below 1 the scale is 1: an absolute SAME
    assert not moved(small, small + 0.5 * SAME) and moved(small, small + 2 * SAME)
    nan = np.array([np.nan, 1.0])
    assert not moved(nan, nan.copy()) and moved(nan, np.array([0.0, 1.0]))


def test_the_first_leak_is_the_earliest_position_that_moved_when_only_later_inputs_changed():
    T = 5
    base = np.zeros((T, 2))  # (T, C)
    assert first_leak(base, [base.copy() for _ in range(T - 1)]) is None
    changed = [base.copy() for _ in range(T - 1)]
    changed[2][1] += 1.0  # inputs after position 2 (from 0) changed, and position 1 moved
    changed[3][4] += 1.0  # position 4 is after t = 3: no leak
    assert first_leak(base, changed) == 2  # positions counted from 1


def test_no_module_of_question_2_imports_another_modules_private_names():
    """What ``model_checks`` and ``run`` share with the module's checks is public where it is defined."""
    package = Path(__file__).resolve().parents[3] / "grader" / "module"
    private = [f"{path.name}: {node.module}.{alias.name}" for path in sorted(package.glob("*.py"))
               for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ImportFrom)
               for alias in node.names if alias.name.startswith("_") and node.module != "__future__"]
    assert private == []
