"""Question 2's layouts: the public ways to hold the projections, each given the course's weights as candidates."""

import numpy as np
import pytest

from grader.module import layouts, wire
from grader.module.wire import Param
from mha import worked_example

from .conftest import course_weights


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
    found = layouts.candidates([wire.Param(n, s, o) for n, s, o in params], course_weights())
    assert found and found[0].layout == layout
    for placed in found:
        assert {n for n, _, _ in params} == set(placed.values)
        assert all(not v.any() for n, v in placed.values.items() if n.endswith("bias"))


def test_the_names_order_the_candidates_and_a_layout_with_a_projection_missing_is_not_guessed():
    names = ("tokeys", "toqueries", "tovalues", "unifyheads")
    found = layouts.candidates([wire.Param(f"{n}.weight", (4, 4), "Linear") for n in names], course_weights())
    first = found[0].values
    assert np.array_equal(first["toqueries.weight"], course_weights().q_cat.T)
    assert np.array_equal(first["tokeys.weight"], course_weights().k_cat.T)
    params = [wire.Param(n, (4, 4), "Linear") for n in ("query.weight", "key.weight", "value.weight")]
    assert layouts.candidates(params, course_weights()) == []


def test_a_module_with_no_output_projection_gets_placements_of_q_k_v_alone_that_say_where():
    W = course_weights()
    params = [wire.Param(f"{n}.weight", (4, 4), "Linear") for n in ("tokeys", "toqueries", "tovalues")]
    found = layouts.candidates(params, W, output=False)
    assert found and found[0].roles == {"q": ("toqueries.weight",), "k": ("tokeys.weight",), "v": ("tovalues.weight",)}
    assert np.array_equal(found[0].values["toqueries.weight"], W.q_cat.T) and len(found[0].values) == 3
    fused = [wire.Param("c_attn.weight", (12, 4), "Linear"), wire.Param("c_attn.bias", (12,), "Linear")]
    assert {p.layout for p in layouts.candidates(fused, W, output=False)} == {"fused"}
    assert layouts.candidates(params + [wire.Param("out.weight", (4, 4), "Linear")], W, output=False) == []


BY_NAME = {layout.name: layout for layout in layouts.LAYOUTS}


def course() -> layouts.CourseWeights:
    ex = worked_example.load()  # d_model 4, h 2, d_k 2
    return layouts.CourseWeights(list(ex.W_Q), list(ex.W_K), list(ex.W_V), ex.W_O)


def linear(name: str, outputs: int, inputs: int = 4) -> Param:
    return Param(f"{name}.weight", (outputs, inputs), "Linear")


def projections(params: list[Param], transposed_bare: bool = False) -> layouts.Projections:
    return layouts.find_projections(params, 4, 2, transposed_bare)


def test_the_table_tries_the_layouts_in_their_order_each_named_once():
    assert [layout.name for layout in layouts.LAYOUTS] == ["fused", "kv", "separate", "per-head"]


def test_a_fused_projection_is_filled_in_blocks_and_per_head_and_its_output_gets_w_o():
    W = course()
    params = [linear("c_attn", 12), linear("c_proj", 4)]
    ways = list(BY_NAME["fused"].recognise(projections(params), output=True))
    assert [way["order"] for way in ways] == ["blocks", "interleaved"]
    blocks, interleaved = (layouts.place(BY_NAME["fused"], way, W, params) for way in ways)
    qkv = np.concatenate([W.q_cat, W.k_cat, W.v_cat], axis=1)  # (d_model, 3·d_model)
    assert np.array_equal(blocks.values["c_attn.weight"], qkv.T)  # a Linear's weight is the transpose
    per_head = np.concatenate([W.q[0], W.k[0], W.v[0], W.q[1], W.k[1], W.v[1]], axis=1)
    assert np.array_equal(interleaved.values["c_attn.weight"], per_head.T)
    assert np.array_equal(blocks.values["c_proj.weight"], W.o.T)
    assert blocks.roles == {"q": ("c_attn.weight",), "k": ("c_attn.weight",), "v": ("c_attn.weight",),
                            "o": ("c_proj.weight",)}


@pytest.mark.parametrize("layout, params", [
    ("fused", [linear("c_attn", 12)]),
    ("kv", [linear("to_q", 4), linear("to_kv", 8)]),
    ("separate", [linear(n, 4) for n in ("query", "key", "value")]),
    ("per-head", [linear(f"heads.{i}.{r}", 2) for i in range(2) for r in ("key", "query", "value")]),
])
def test_each_layout_is_recognised_without_an_output_projection_only_when_asked_for(layout, params):
    found = projections(params)
    assert list(BY_NAME[layout].recognise(found, output=True)) == []
    ways = list(BY_NAME[layout].recognise(found, output=False))
    assert ways and all("o" not in way for way in ways)
    placed = layouts.place(BY_NAME[layout], ways[0], course(), params)
    assert set(placed.values) == {p.name for p in params} and "o" not in placed.roles


def test_the_lectures_heads_are_filled_head_by_head_by_their_names():
    W = course()
    params = [linear(f"heads.{i}.{r}", 2) for i in range(2) for r in ("key", "query", "value")] + [linear("proj", 4)]
    way = next(BY_NAME["per-head"].recognise(projections(params), output=True))
    placed = layouts.place(BY_NAME["per-head"], way, W, params)
    for i in range(2):
        assert np.array_equal(placed.values[f"heads.{i}.query.weight"], W.q[i].T)
        assert np.array_equal(placed.values[f"heads.{i}.key.weight"], W.k[i].T)
    assert placed.roles["v"] == ("heads.0.value.weight", "heads.1.value.weight")


def test_a_bare_square_matrix_is_tried_as_x_at_w_then_as_x_at_w_transposed():
    params = [Param(n, (4, 4), "MultiHeadAttention") for n in ("W_q", "W_k", "W_v", "W_o")]
    as_written, transposed = (projections(params, t).square for t in (False, True))
    assert [p.transposed for p in as_written] == [False] * 4 and [p.transposed for p in transposed] == [True] * 4
    found = layouts.candidates(params, course())
    assert np.array_equal(found[0].values["W_q"], course().q_cat)
    assert any(np.array_equal(p.values["W_q"], course().q_cat.T) for p in found)


def test_one_parameter_given_two_matrices_is_refused_where_the_output_falls_back_on_q():
    """to_q is the last square created and none is named as the output: the kv layout's fallback gives it W_O too.
    That placement would fill to_q twice (Q, then W_O over it): it is refused, never tried."""
    W = course()
    params = [linear("other", 4), linear("to_q", 4), linear("to_kv", 8)]
    ways = list(BY_NAME["kv"].recognise(projections(params), output=True))
    assert ways and all(way["q"] is way["o"] for way in ways)
    with pytest.raises(ValueError, match="one parameter in two roles: to_q.weight"):
        layouts.place(BY_NAME["kv"], ways[0], W, params)
    assert layouts.candidates(params, W) == []


def test_a_placement_fills_every_parameter_once_and_zeroes_the_biases():
    W = course()
    params = [linear("to_q", 4), linear("to_kv", 8), linear("to_out.0", 4), Param("to_out.0.bias", (4,), "Linear")]
    way = next(BY_NAME["kv"].recognise(projections(params), output=True))
    placed = layouts.place(BY_NAME["kv"], way, W, params)
    assert list(placed.values) == ["to_q.weight", "to_kv.weight", "to_out.0.weight", "to_out.0.bias"]
    assert not placed.values["to_out.0.bias"].any()
    assert np.array_equal(placed.values["to_kv.weight"], np.concatenate([W.k_cat, W.v_cat], axis=1).T)


def test_projections_named_partly_by_role_are_placed_the_named_ones_in_place():
    """query, key, value and an output named for no role ("combine"): the named three keep their roles, the fourth
    is the output; this crashed the candidates once (a role of None looked up in the roles' string)."""
    W = course()
    params = [linear(n, 4) for n in ("query", "key", "value", "combine")]
    ways = list(BY_NAME["separate"].recognise(projections(params), output=True))
    placed = [layouts.place(BY_NAME["separate"], way, W, params) for way in ways]
    assert any(p.roles.get("q") == ("query.weight",) and p.roles.get("o") == ("combine.weight",) for p in placed)
