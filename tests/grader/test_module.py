"""Question 2: the module corpus under tests/grader/modules/, graded in the sandbox as the issue's rules say.

Each corpus file says its expected verdict on its second line: ``# expect: full``, ``# expect: mistakes=ID,...``
(loses points, names exactly these), or ``# expect: lost=NAME:GROUP,...`` (loses exactly these tests, names none).
"""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grader import rubric
from grader.grade import GradeConfig, grade
from grader.module import cases, diagnosis, layouts, runner, variants, wire
from grader.module.contract import COURSE_MODEL, MODULE_MISTAKE_IDS
from grader.module.model_checks import allowed_counts
from grader.sandbox import launch
from grader.sandbox.limits import Limits
from mha import reference, worked_example

from .conftest import run_grader

IMPORTS = rubric.load().imports  # what the default rubric lets a submission import

MODULES = Path(__file__).with_name("modules")
FILES = sorted(MODULES.glob("*.py"))
SEEDS = range(4)  # identities per correct module (every one of them: the layouts, not the seeds, are what varies)
CONFIG = GradeConfig(limits=Limits(call_timeout=10.0))  # a loaded machine must not turn a slow call into a failure


def expectation(path: Path) -> tuple[str, set]:
    kind, _, values = re.match(r"# expect: (\S+)", path.read_text().splitlines()[1]).group(1).partition("=")
    return kind, set(filter(None, values.split(",")))


@pytest.fixture(scope="module")
def spawner():
    with_torch = launch.launcher("namespaces", launch.preload_for(p.read_bytes() for p in FILES), IMPORTS)
    yield with_torch
    with_torch.close()


def test_the_corpus_has_fifteen_correct_layouts_and_names_every_module_mistake():
    assert len([p for p in FILES if expectation(p)[0] == "full"]) >= 15
    named = set().union(*(expectation(p)[1] for p in FILES if expectation(p)[0] == "mistakes"))
    assert set(MODULE_MISTAKE_IDS) <= named


@pytest.mark.parametrize("path", [p for p in FILES if expectation(p)[0] == "full"], ids=lambda p: p.stem)
def test_every_correct_module_gets_full_marks_on_several_identities(path, spawner):
    for seed in SEEDS:
        result = grade(path, GradeConfig(seed=seed, limits=CONFIG.limits), spawner=spawner)
        failed = [t.feedback for t in result.tests if not t.passed]
        assert result.full_marks and not failed and result.mistakes == [], (seed, failed)
        assert {t.function for t in result.tests} >= {"MultiHeadAttention"}


@pytest.mark.parametrize("path", [p for p in FILES if expectation(p)[0] != "full"], ids=lambda p: p.stem)
def test_each_bug_loses_points_and_is_named_exactly(path, spawner):
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
        tmp_path, stem, mistake, fix, lang, leak):
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
def test_a_model_that_leaks_only_through_its_module_is_told_so(tmp_path, lang, phrase):
    out = tmp_path / "r.json"
    proc = run_grader(MODULES / "bug_model_through_module.py", "--lang", lang, "--json", out)
    assert proc.returncode == 1, proc.stderr
    tests = {t["name"].split(" (")[0]: t for t in json.loads(out.read_text())["tests"]}
    model = next(t for name, t in tests.items() if name.startswith("build_model: caus"))
    module = next(t for name, t in tests.items() if name.startswith("MultiHeadAttention: caus"))
    assert module["status"] == model["status"] == "failed"
    assert phrase in model["output"] and phrase not in module["output"]


def test_a_model_that_leaks_by_itself_is_not_blamed_on_its_module(spawner):
    result = grade(MODULES / "bug_model_leaks.py", CONFIG, spawner=spawner)
    model = next(t for t in result.tests if t.function == "build_model" and t.group == "causal")
    assert not model.passed and "because your" not in model.feedback


def test_a_module_that_cannot_be_mapped_is_graded_on_the_weight_free_checks_and_told_the_shapes(spawner):
    result = grade(MODULES / "bug_unmappable_low_rank.py", CONFIG, spawner=spawner)
    worked = next(t for t in result.tests if t.group == "worked")
    assert "down (4, 4, 2)" in worked.feedback and "up (4, 2, 4)" in worked.feedback
    assert "3·d_model outputs" in worked.feedback
    assert all(t.passed for t in result.tests if t.group not in ("worked", "hidden"))


def _course() -> layouts.CourseWeights:
    ex = worked_example.load()
    return layouts.CourseWeights(list(ex.W_Q), list(ex.W_K), list(ex.W_V), ex.W_O)


@pytest.mark.parametrize("params, layout", [
    ([("c_attn.weight", (12, 4), "Linear"), ("c_attn.bias", (12,), "Linear"), ("c_proj.weight", (4, 4), "Linear")],
     "fused"),
    ([("c_attn.weight", (4, 12), "Conv1D"), ("c_attn.bias", (12,), "Conv1D"), ("c_proj.weight", (4, 4), "Conv1D")],
     "fused"),
    ([("heads.0.key.weight", (2, 4), "Linear"), ("heads.0.query.weight", (2, 4), "Linear"),
      ("heads.0.value.weight", (2, 4), "Linear"), ("heads.1.key.weight", (2, 4), "Linear"),
      ("heads.1.query.weight", (2, 4), "Linear"), ("heads.1.value.weight", (2, 4), "Linear"),
      ("proj.weight", (4, 4), "Linear"), ("proj.bias", (4,), "Linear")], "per-head"),
    ([("mha.in_proj_weight", (12, 4), "MultiheadAttention"),
      ("mha.out_proj.weight", (4, 4), "NonDynamicallyQuantizableLinear")], "fused"),
    ([(f"linears.{i}.weight", (4, 4), "Linear") for i in range(4)], "separate"),
    ([(n, (4, 4), "MultiHeadAttention") for n in ("W_q", "W_k", "W_v", "W_o")], "separate"),
    ([("to_q.weight", (4, 4), "Linear"), ("to_kv.weight", (8, 4), "Linear"), ("to_out.0.weight", (4, 4), "Linear"),
      ("to_out.0.bias", (4,), "Linear")], "kv"),
])
def test_each_public_layout_gives_candidates_with_every_projection_and_zero_biases(params, layout):
    found = layouts.candidates([wire.Param(n, s, o) for n, s, o in params], _course())
    assert found and found[0].layout == layout
    for placed in found:
        assert {n for n, _, _ in params} == set(placed.values)
        assert all(not v.any() for n, v in placed.values.items() if n.endswith("bias"))


def test_the_names_order_the_candidates_and_a_layout_with_a_projection_missing_is_not_guessed():
    names = ("tokeys", "toqueries", "tovalues", "unifyheads")
    found = layouts.candidates([wire.Param(f"{n}.weight", (4, 4), "Linear") for n in names], _course())
    first = found[0].values
    assert np.array_equal(first["toqueries.weight"], _course().q_cat.T)
    assert np.array_equal(first["tokeys.weight"], _course().k_cat.T)
    params = [wire.Param(n, (4, 4), "Linear") for n in ("query.weight", "key.weight", "value.weight")]
    assert layouts.candidates(params, _course()) == []


def test_a_module_with_no_output_projection_gets_placements_of_q_k_v_alone_that_say_where():
    W = _course()
    params = [wire.Param(f"{n}.weight", (4, 4), "Linear") for n in ("tokeys", "toqueries", "tovalues")]
    found = layouts.candidates(params, W, output=False)
    assert found and found[0].roles == {"q": ("toqueries.weight",), "k": ("tokeys.weight",), "v": ("tovalues.weight",)}
    assert np.array_equal(found[0].values["toqueries.weight"], W.q_cat.T) and len(found[0].values) == 3
    fused = [wire.Param("c_attn.weight", (12, 4), "Linear"), wire.Param("c_attn.bias", (12,), "Linear")]
    assert {p.layout for p in layouts.candidates(fused, W, output=False)} == {"fused"}
    assert layouts.candidates(params + [wire.Param("out.weight", (4, 4), "Linear")], W, output=False) == []


def test_the_masks_given_to_an_inner_multihead_attention_are_read_from_a_closed_list():
    ok = {"params": [], "init": [], "masks": ["key_padding_mask", "key_padding_mask"]}
    assert wire.module_description(ok).masks == ("key_padding_mask",)
    assert wire.module_description({"params": [], "init": []}).masks == ()
    for forged in (["rm -rf /"], "attn_mask", [["attn_mask"]], [3]):
        assert wire.module_description({"params": [], "init": [], "masks": forged}) is None


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


def test_a_described_shape_is_checked_before_anything_is_allocated():
    ok = {"params": [["w", [4, 4], "Linear"]], "init": ["d_model"]}
    assert wire.module_description(ok).params == (wire.Param("w", (4, 4), "Linear"),)
    for forged in ({"params": [["w", {"rows": 4}, "Linear"]], "init": []}, {"params": [[7, [4], "X"]], "init": []},
                   {"params": [["w", [4] * 9, "X"]], "init": []}, {"params": [["w", [-1], "X"]], "init": []},
                   [1, 2], "[" * 100000, None):
        assert wire.module_description(forged) is None
    assert wire.module_description(np.full(8, 300.0)) is None  # an array where a JSON answer belongs
    huge = [wire.Param(f"w{i}", (4, 4), "Linear") for i in range(4)]  # four projections, one name each
    huge.append(wire.Param("attn.bias", (32768, 32768), "Linear"))
    with pytest.raises(layouts.TooLarge):
        layouts.candidates(huge, _course())


def test_the_reference_variant_is_the_reference_and_every_mistake_changes_the_answers():
    ex, W = worked_example.load(), _course()
    want = variants.expected(ex.X[None], W)
    assert np.allclose(variants.REF.forward(ex.X[None], W), want, atol=1e-12)
    assert np.allclose(want[0], reference.multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O), atol=1e-12)
    hidden = cases.hidden_cases(0)[0]  # the worked example's W_O is the identity: a missing one shows only here
    for mistake, variant in variants.VARIANTS:
        for x, weights in ((ex.X[None], W), (hidden.x, hidden.weights)):
            if mistake != "missing-output-projection" or weights is not W:
                got = variant.forward(x, weights)
                assert not np.allclose(got, variants.expected(x, weights), equal_nan=True), mistake


def test_the_course_sizes_are_the_models_and_its_parameter_counts_are_allowed():
    from mha import schema
    from mha.model import GPT
    from mha.schema import model_config

    course = schema.load(Path(__file__).resolve().parents[2] / "params.yaml")
    config = model_config(course)
    assert (COURSE_MODEL.vocab_size, COURSE_MODEL.block_size, COURSE_MODEL.n_embd, COURSE_MODEL.n_layer,
            COURSE_MODEL.n_head) == (config.vocab_size, config.block_size, config.n_embd, config.n_layer,
                                     config.n_head)
    for positions in ("learned", "sinusoidal", "none"):
        assert GPT(model_config(course, positions=positions)).num_parameters() in allowed_counts()
    assert GPT(model_config(course, n_layer=3)).num_parameters() not in allowed_counts()
    assert GPT(model_config(course, n_embd=96, n_head=2)).num_parameters() not in allowed_counts()


def test_the_rubric_chooses_the_contract_and_refuses_an_unknown_one(tmp_path):
    assert rubric.load().contract == "auto"
    assert [g for n, g, _ in rubric.load().module_tests() if n == "MultiHeadAttention"][:3] == [
        "worked", "hidden", "causal"]
    bad = tmp_path / "r.toml"
    bad.write_text('[options]\ncontract = "essay"\n')
    with pytest.raises(ValueError, match="contract"):
        rubric.load(bad)
    forced = tmp_path / "m.toml"
    forced.write_text('[options]\ncontract = "module"\n')
    result = grade(Path(__file__).with_name("submissions") / "correct_numpy.py",
                   GradeConfig(rubric=rubric.load(forced)))
    assert not result.full_marks and "does not define MultiHeadAttention" in result.tests[0].feedback


def test_a_function_failing_only_through_the_students_softmax_says_so():
    result = grade(Path(__file__).with_name("submissions") / "mistake_softmax_wrong_axis.py", CONFIG)
    weights = [t for t in result.tests if t.function == "attention_weights" and not t.passed]
    assert weights and all("fails because your softmax does" in t.feedback for t in weights)
    softmax = [t for t in result.tests if t.function == "softmax" and not t.passed]
    assert softmax and all("fails because" not in t.feedback for t in softmax)


@pytest.mark.parametrize("lang, word", [("en", "optional"), ("pt", "opcional")])
def test_the_module_template_shows_the_class_and_the_model_and_grades_as_not_implemented(tmp_path, lang, word):
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


def test_module_hand_ins_found_by_the_intake_get_full_marks_in_a_batch_with_the_secret(tmp_path):
    """Question 2 through the intake: a .py, a Colab notebook and a folder that also holds a function of
    question 1, beside a question 1 student, graded by the batch command with each student's cases from the secret."""
    batch = tmp_path / "class"
    (batch / "carla").mkdir(parents=True)
    shutil.copy(MODULES / "correct_nanogpt.py", batch / "ana.py")
    shutil.copy(Path(__file__).with_name("submissions") / "correct_numpy.py", batch / "bia.py")
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


def test_a_module_that_runs_only_in_float32_is_judged_there_and_told_so(spawner):
    result = grade(MODULES / "correct_float32_only.py", CONFIG, spawner=spawner)
    worked = next(t for t in result.tests if t.group == "worked")
    assert worked.passed and "graded in float32" in worked.feedback and "expected scalar type" in worked.feedback
    dtypes = next(t for t in result.tests if t.group == "dtypes")
    assert not dtypes.passed and "forward(x) of MultiHeadAttention(16, 4)" in dtypes.feedback


def test_a_constructor_that_fails_is_told_as_the_call_that_built_it(tmp_path):
    bad = tmp_path / "swapped.py"
    bad.write_text("import torch.nn as nn\n\n\nclass MultiHeadAttention(nn.Module):\n"
                   "    def __init__(self, n_heads, d_model):\n        super().__init__()\n"
                   "        assert d_model % n_heads == 0, 'd_model must divide by n_heads'\n")
    result = grade(bad, CONFIG)
    worked = next(t for t in result.tests if t.group == "worked")
    assert "building MultiHeadAttention(4, 2) failed" in worked.feedback and "AssertionError" in worked.feedback
    assert "MultiHeadAttention(d_model, n_heads)" in worked.feedback


def test_a_file_with_the_module_and_all_seven_functions_is_graded_on_both_and_says_so(tmp_path):
    both = tmp_path / "both.py"
    both.write_text((Path(__file__).with_name("submissions") / "correct_numpy.py").read_text() + "\n\n"
                    + (MODULES / "correct_llama.py").read_text())
    result = grade(both, CONFIG)
    assert {t.function for t in result.tests} >= {"MultiHeadAttention", "softmax", "multi_head_attention"}
    assert result.full_marks and any("graded on both questions" in n for n in result.notes)
