"""The wire between the grader and the sandbox's child (grader/sandbox/inside/wire.py): one codec both ways.

Frames, values of every rank and the JSON answer round-trip through the module both sides import; forged
frames and descriptors are refused before anything is allocated; the R runner's constants are wire.py's; and
the real child, started as the sandbox starts it, answers a JSON answer and arrays of every rank.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path

import numpy as np
import pytest

from grader.sandbox import isolation, r_language, session
from grader.sandbox.inside import wire
from grader.sandbox.launch import DirectLauncher
from grader.sandbox.limits import Limits
from grader.sandbox.session import Sandbox

RANKS = range(5)


def _array(rank: int, seed: int = 0) -> np.ndarray:
    shape = tuple(range(2, 2 + rank))  # (), (2,), (2, 3), (2, 3, 4), (2, 3, 4, 5)
    return np.random.default_rng([seed, rank]).standard_normal(shape)


def _round_trip(args, kwargs, max_entries=10_000):
    enc_args, enc_kwargs, blob = wire.encode_values(args, kwargs, np)
    # through JSON, as the header travels
    return wire.decode_values(json.loads(json.dumps(enc_args)), json.loads(json.dumps(enc_kwargs)), blob, np,
                              max_entries)


def test_the_grader_and_the_child_read_one_wire_module():
    assert isolation.RUNNER == Path(wire.__file__).parent  # the folder the sandbox runs holds this very file
    assert session.FRAME_HEAD is wire.FRAME_HEAD
    assert session.decode_values is wire.decode_values and session.encode_values is wire.encode_values
    assert wire.FRAME_HEAD.size == wire.TOKEN_BYTES + 4 + 8


@pytest.mark.parametrize("rank", RANKS)
def test_an_array_of_every_rank_comes_back_as_sent(rank):
    sent = _array(rank)
    (back,), kwargs = _round_trip([sent], {})
    assert back.shape == sent.shape and back.dtype == np.float64
    assert np.array_equal(back, sent)
    assert kwargs == {}


def test_every_kind_of_value_comes_back_as_sent():
    args = [3, True, -(2**63), [1, [False, _array(2)]], np.float32(0.5), np.arange(6.0).reshape(2, 3),
            np.int64(7), np.bool_(False), np.arange(4, dtype=np.int32)]
    kwargs = {"w:q_proj.weight": _array(3, 1), "causal": False, "n": 2}
    back, back_kwargs = _round_trip(args, kwargs)
    assert back[:3] == [3, True, -(2**63)] and type(back[1]) is bool
    assert back[3][:2] == [1, [False, back[3][1][1]]] and np.array_equal(back[3][1][1], _array(2))
    assert back[4].shape == () and back[4] == 0.5  # a float stays 0-D
    assert np.array_equal(back[5], np.arange(6.0).reshape(2, 3))
    assert back[6] == 7 and type(back[6]) is int and back[7] is False
    assert back[8].dtype == np.float64 and np.array_equal(back[8], [0, 1, 2, 3])
    assert np.array_equal(back_kwargs["w:q_proj.weight"], _array(3, 1))
    assert back_kwargs["causal"] is False and back_kwargs["n"] == 2


def test_a_frame_is_token_lengths_header_blob():
    token = secrets.token_bytes(wire.TOKEN_BYTES)
    blob = _array(2).tobytes()
    data = wire.frame(token, {"id": 3, "ok": True, "shape": [2, 3]}, blob)
    got_token, header_len, blob_len = wire.FRAME_HEAD.unpack_from(data)
    assert got_token == token and blob_len == len(blob)
    head = wire.FRAME_HEAD.size
    assert json.loads(data[head:head + header_len]) == {"id": 3, "ok": True, "shape": [2, 3]}
    assert data[head + header_len:] == blob
    read, write = os.pipe()
    try:
        wire.write_all(write, data)
        os.close(write)
        write = None
        assert wire.read_frame(read) == (token, {"id": 3, "ok": True, "shape": [2, 3]}, blob)
        with pytest.raises(EOFError):
            wire.read_frame(read)
    finally:
        os.close(read)
        if write is not None:
            os.close(write)


def test_a_json_answer_comes_back_as_sent_and_a_forged_one_is_refused():
    description = {"params": [["q.weight", [4, 4], "Linear"]], "init": ["d_model", "n_heads"]}
    assert wire.json_from(json.dumps(description).encode()) == description
    for forged in (b"\xff\xfe", b"{", b"[" * 100_000, b" " * (wire.MAX_JSON + 1)):
        with pytest.raises(wire.WireError):
            wire.json_from(forged)


def test_forged_descriptors_are_refused_before_anything_is_allocated():
    _, _, blob = wire.encode_values([_array(2)], {}, np)
    matrix = {"kind": "matrix", "shape": [2, 3], "offset": 0}
    refused = [
        ([{"kind": "matrix", "shape": [2**31, 2**31], "offset": 0}], {}),  # dimension over MAX_DIM
        ([{"kind": "matrix", "shape": [1] * (wire.MAX_RANK + 1), "offset": 0}], {}),  # rank over MAX_RANK
        ([{"kind": "matrix", "shape": [0] + [2**31 - 1] * 40, "offset": 0}], {}),  # numpy cannot make it
        ([{"kind": "matrix", "shape": [2, 3], "offset": 8}], {}),  # past the blob's end
        ([{"kind": "matrix", "shape": [2, 3], "offset": -8}], {}),
        ([{"kind": "matrix", "shape": [2.0, 3], "offset": 0}], {}),
        ([{"kind": "matrix", "shape": "2,3", "offset": 0}], {}),
        ([{"kind": "scalar", "value": 2**64 + 1}], {}),
        ([{"kind": "scalar", "value": 1.5}], {}),
        ([{"kind": "function", "name": "eval"}], {}),
        ([{"kind": "list", "items": [matrix] * (wire.MAX_ITEMS + 1)}], {}),
        ([{"kind": "list", "items": [{"kind": "list", "items": [{"kind": "list", "items": [
            {"kind": "list", "items": [{"kind": "list", "items": []}]}]}]}]}], {}),  # nested past MAX_NESTING
        ([matrix] * (wire.MAX_ITEMS + 1), {}),
        ([], {"x" * (wire.MAX_NAME + 1): matrix}),
        ({"0": matrix}, {}),
        ([], [matrix]),
        ([matrix, matrix], {}),  # 12 entries where the budget allows 6
    ]
    for args, kwargs in refused:
        with pytest.raises(wire.WireError):
            wire.decode_values(args, kwargs, blob, np, 6)
    assert wire.decode_values([matrix], {}, blob, np, 6)[0][0].shape == (2, 3)  # the same within the caps


def test_an_answers_shape_is_checked_against_the_entry_budget_before_allocation():
    with pytest.raises(wire.WireError, match="more entries"):
        wire.array_from([10**6, 10**6], b"", 0, np, [100])
    assert wire.array_from([2_000_000, 0], b"", 0, np, [100]).shape == (2_000_000, 0)  # empty: any dimension


def test_the_r_runner_speaks_wire_py_s_frames():
    source = r_language.RUNNER.read_text(encoding="utf-8")
    constants = {name: int(value) for name, value in re.findall(r"^\s*([A-Z0-9_]+) <- (\d+)L\b", source, re.M)}
    assert constants == {"TOKEN_BYTES": wire.TOKEN_BYTES, "FRAME_HEAD_BYTES": wire.FRAME_HEAD.size,
                         "FLOAT64_BYTES": wire.FLOAT64_BYTES}
    assert not re.search(r"read_exact\(\d+L?\)|size = 8L", source)  # no second spelling of them


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
def test_the_real_child_answers_every_rank_and_a_json_answer(handin, tmp_path):
    student = tmp_path / "student.py"
    student.write_text("def same(x):\n    return x\n\ndef table(x):\n    return {'rows': len(x)}\n")
    harness = "EXPORTS = {'_grader_describe': lambda **spec: {'params': [['w', [spec['n'], 2], 'Linear']]}}\n"
    launcher = DirectLauncher()
    try:
        with Sandbox(handin(student), ["same", "table"], Limits(), spawner=launcher, harness={"harness": harness},
                     imports=("numpy",)) as box:
            assert box.start().status == "ok"
            for rank in RANKS:
                sent = _array(rank, 3)
                outcome = box.call("same", [sent])
                assert outcome.status == "ok" and outcome.value.shape == sent.shape
                assert np.array_equal(outcome.value, sent)
            answer = box.call("_grader_describe", [], {"n": 3})
            assert answer.status == "ok" and answer.value == {"params": [["w", [3, 2], "Linear"]]}
            # only the driver's entry points answer in JSON: a student's dict is a value that is not numbers
            table = box.call("table", [_array(2)])
            assert (table.status, table.stage, table.dtype) == ("error", "convert", "dict")
    finally:
        launcher.close()


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@pytest.mark.skipif(r_language.find() is None, reason=f"R is not installed: apt-get install {r_language.PACKAGES}")
def test_the_r_runner_decodes_and_answers_arrays_of_every_rank(handin, tmp_path):
    source = tmp_path / "echo.R"
    source.write_text("same <- function(x) x\nshape <- function(x) length(dim(x))\n")
    launcher = DirectLauncher()
    try:
        with Sandbox(handin(source), ["same", "shape"], Limits(), spawner=launcher, imports=()) as box:
            assert box.start().status == "ok"
            for rank in range(1, 5):  # R has no 0-D value: one number is a vector of length 1
                sent = _array(rank, 4)
                outcome = box.call("same", [sent])
                assert outcome.status == "ok" and outcome.value.tobytes() == sent.tobytes()
                assert outcome.value.shape == sent.shape
                assert box.call("shape", [sent]).value == (rank if rank > 1 else 0)  # an R array of that rank
    finally:
        launcher.close()


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
def test_the_child_allows_exactly_the_imports_its_config_names(handin, tmp_path):
    student = tmp_path / "student.py"
    student.write_text("import yaml\n\ndef same(x):\n    return x\n")
    launcher = DirectLauncher()
    try:
        for imports, refused in ((("numpy",), ["ModuleNotFoundError"]), (("numpy", "yaml"), [])):
            with Sandbox(handin(student), ["same"], Limits(), spawner=launcher, imports=imports) as box:
                load = box.start()  # a statement that raises is skipped, as a notebook goes on
                assert load.status == "ok" and [s["error_type"] for s in load.skipped] == refused, load
    finally:
        launcher.close()
