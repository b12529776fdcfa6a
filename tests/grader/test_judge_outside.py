"""Nothing of the grader's judgement inside the sandbox: no reference, no grader module, no way to it; every
byte from the child checked before use; attribution computed in the grader from the child's requests.

The attacks that are single files (hostile/reference_from_sys_modules.py, reference_from_gc_and_frames.py,
rewrites_the_driver.py) run in test_hostile.py, alone and in a batch, and in the uid mode in sandbox/test_uid_mode.py;
the ones here need the namespaces mode (a file walk sees the whole disk in the uid mode) or drive the
sandbox directly.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import grader
from grader import rubric
from grader.functions.attribution import ReferenceHelpers
from grader.grade import GradeConfig
from grader.module import harness_sources
from grader.sandbox import isolation
from grader.sandbox.inside.wire import MAX_RANK, WireError, decode_values, encode_values
from grader.sandbox.limits import Limits
from grader.sandbox.session import MAX_HELPER_REQUESTS, Sandbox

from .conftest import CORPORA, SUBMISSIONS, needs_system

IMPORTS = rubric.load().imports  # what the default rubric lets a submission import

JUDGE = CORPORA / "judge"
REPO = str(Path(grader.__file__).resolve().parent.parent)
NAMESPACES = needs_system(isolation.namespaces_problem(), "no namespaces here")
COURSE = ("project", "scaled_scores", "causal_mask", "softmax", "attention_weights", "attention_head",
          "multi_head_attention")

# What a submission can reach of the process it runs in, as numbers: modules of the grader's (by name or by
# file), functions of the course's names from another file than its own, and anything in memory that holds
# the reference's functions (a module, a dict, the harness's "reference").
PROBE = '''
import gc, sys, types
COURSE = {course!r}

def probe(n):
    grader_named = [m for m in sys.modules if m.split(".")[0] in ("grader", "mha") or m.startswith("_grader")]
    grader_files = [m for m, mod in list(sys.modules.items())
                    if str(getattr(mod, "__file__", "") or "").startswith({repo!r})]
    foreign, holders = [], []
    for obj in gc.get_objects():
        code = getattr(obj, "__code__", None)
        if code is not None and getattr(obj, "__name__", "") in COURSE and code.co_filename != __file__:
            foreign.append(obj)
        space = vars(obj) if isinstance(obj, types.ModuleType) else obj
        if isinstance(space, dict) and space is not globals():
            held = [space.get(k) for k in ("reference", "_grader_reference")] + [space.get(c) for c in COURSE]
            if any(callable(getattr(h, "causal_mask", None)) or (callable(h) and getattr(h, "__code__", None)
                   is not None and h.__code__.co_filename != __file__) for h in held if h is not None):
                holders.append(space)
    print("PROBE", sorted(grader_named), sorted(grader_files), [f.__code__.co_filename for f in foreign])
    return [[len(grader_named), len(grader_files), len(foreign), len(holders), len(sys.modules)]]
'''


def _student(tmp_path: Path, body: str, name: str = "student.py") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def test_the_sandbox_is_sent_the_module_driver_only():
    sent = harness_sources()
    assert set(sent) == {"harness"}
    assert "def causal_mask" not in sent["harness"] and "_grader_with_reference" not in sent["harness"]


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@NAMESPACES
def test_a_submission_reaches_no_module_function_or_object_of_the_grader_or_the_reference(handin, tmp_path):
    """What the child holds when a submission runs, with the driver sent as grade() sends it."""
    path = _student(tmp_path, PROBE.format(course=COURSE, repo=REPO))
    with Sandbox(handin(path), ["probe"], harness=harness_sources(), imports=IMPORTS) as box:
        assert box.start().status == "ok"
        out = box.call("probe", [1])
    assert out.status == "ok", out
    grader_named, grader_files, foreign, holders, modules = out.value[0]
    assert modules > 50, "the probe saw too few modules to mean anything"
    assert (grader_named, grader_files, foreign, holders) == (0, 0, 0, 0), box.captured.text()


@NAMESPACES
def test_a_walk_over_every_file_the_child_can_see_finds_no_reference(grade, tmp_path):
    result = grade(JUDGE / "reference_from_files.py", GradeConfig(lang="en"))
    assert sum(t.score for t in result.tests) == 0
    assert any("NOT FOUND" in n and "every file read" in n for n in result.notes), result.notes


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@NAMESPACES
def test_each_forged_answer_frame_is_a_reason_for_that_call_never_a_grader_error(handin, tmp_path):
    forgeries = JUDGE / "forger.py"
    expected = ["protocol"] * 15 + ["ok", "error", "too_big", "protocol"]
    with Sandbox(handin(forgeries), ["forge", "fine", "echo"], Limits(max_restarts=40), imports=IMPORTS) as box:
        assert box.start().status == "ok"
        got = [box.call("forge", [k]) for k in range(len(expected))]
        assert box.call("fine", [5]).value.tolist() == [[5.0]]  # and the next child still answers
        for sent in (np.arange(24.0).reshape(2, 3, 4), np.float64(2.5), np.zeros((3, 0, 2))):  # any rank, both ways
            back = box.call("echo", [sent])
            assert back.status == "ok" and back.value.shape == np.shape(sent) and np.array_equal(back.value, sent)
    assert [o.status for o in got] == expected, [(o.status, o.error) for o in got]
    assert all(o.error for o in got if o.status == "protocol")  # each says what was wrong
    deep, odd_error, odd_big = got[15], got[16], got[17]
    assert deep.value.shape == (1,) * 10 and isinstance(deep.dtype, str)  # any rank comes back
    assert (odd_error.line, odd_error.error_type, odd_error.error) == (None, "7", "[[[]]]")
    assert isinstance(odd_big.error, str) and len(odd_big.error) <= 20


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@NAMESPACES
def test_helper_requests_are_answered_in_the_grader_within_caps_and_forged_ones_end_the_call(handin, tmp_path):
    helpers = ("softmax", "causal_mask")
    with Sandbox(handin(JUDGE / "asks_helpers.py"), ["attention_weights", "forge_request"],
                 Limits(call_timeout=20, max_restarts=20), imports=IMPORTS) as box:
        assert box.start().status == "ok"
        asked = box.call("attention_weights", [np.zeros((2, 2)), np.zeros((2, 2))],
                         helpers=ReferenceHelpers(helpers))
        # outside a call that offers them, the same names are the submission's own, here undefined
        alone = box.call("attention_weights", [np.zeros((2, 2)), np.zeros((2, 2))])
        forged = [box.call("forge_request", [k], helpers=ReferenceHelpers(helpers)).status for k in range(8)]
    assert asked.status == "ok", asked
    # right values for softmax, causal_mask and lists; refused: 10**18 entries, too much work, a vector, an
    # unknown keyword, and every request past MAX_HELPER_REQUESTS
    assert asked.value[0].tolist() == [1, 1, 2, 2, 2, 2, 1, 2]
    assert MAX_HELPER_REQUESTS < 300
    assert alone.status == "error" and alone.error_type == "KeyError"
    assert forged == ["protocol"] * 8


def test_values_of_any_rank_round_trip_through_the_codec_and_odd_descriptors_are_refused():
    values = [np.arange(24.0).reshape(2, 3, 4), np.zeros((0, 5)), np.ones((1,) * MAX_RANK), 3, True,
              [np.eye(2), [np.ones(3), 4]]]
    args, kwargs, blob = encode_values(values, {"causal": False}, np)
    back, back_kwargs = decode_values(json.loads(json.dumps(args)), kwargs, blob, np, 10_000)
    assert back_kwargs == {"causal": False} and back[3:5] == [3, True]
    for sent, got in zip(values[:3], back[:3], strict=True):
        assert got.shape == sent.shape and np.array_equal(got, sent)
    assert np.array_equal(back[5][0], np.eye(2)) and back[5][1][1] == 4
    for odd in ([{"kind": "matrix", "shape": [10**6, 10**6], "offset": 0}],
                [{"kind": "matrix", "shape": [1] * (MAX_RANK + 1), "offset": 0}],
                [{"kind": "matrix", "shape": [2, 2], "offset": len(blob)}],
                [{"kind": "scalar", "value": 2.5}], [{"kind": "scalar", "value": 10**30}],
                [{"kind": "eval", "value": "1"}], [[]], {"a": 1},
                [{"kind": "list", "items": [{"kind": "list", "items": [{"kind": "list", "items": [
                    {"kind": "list", "items": [{"kind": "list", "items": []}]}]}]}]}]):
        with pytest.raises(WireError):
            decode_values(odd, {}, blob, np, 10**7)


def _oracle_source() -> str:
    """The softmax mistake, plus a table of every softmax value its attention_weights ever got back."""
    source = (SUBMISSIONS / "mistake_softmax_wrong_axis.py").read_text()
    source = source.replace("def softmax(S):\n    S = np.asarray(S)\n",
                            "SEEN = {}\n\n\ndef softmax(S):\n    S = np.asarray(S)\n"
                            "    if S.tobytes() in SEEN:\n        return SEEN[S.tobytes()]\n")
    source = source.replace("    return softmax(S)\n", "    A = softmax(S)\n    SEEN[S.tobytes()] = A\n    return A\n")
    assert "SEEN[S.tobytes()] = A" in source and "return SEEN" in source
    return source


@NAMESPACES
def test_attribution_says_which_helper_and_the_values_it_lends_are_worth_no_point(grade, tmp_path):
    """Attribution runs after every graded call: a submission that keeps the grader's helper values gains
    nothing from them, and its weights are still told that they fail because of its softmax."""
    honest = grade(SUBMISSIONS / "mistake_softmax_wrong_axis.py", GradeConfig(lang="en"))
    oracle = grade(_student(tmp_path, _oracle_source(), "oracle.py"), GradeConfig(lang="en"))
    assert [t.score for t in oracle.tests] == [t.score for t in honest.tests]
    for result in (honest, oracle):
        weights = [t for t in result.tests if t.function == "attention_weights" and not t.passed]
        softmax = [t for t in result.tests if t.function == "softmax" and not t.passed]
        assert weights and all("fails because your softmax does" in t.feedback for t in weights)
        assert softmax and all("fails because" not in t.feedback for t in softmax)
