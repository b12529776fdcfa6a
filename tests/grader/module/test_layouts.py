"""Question 2's layouts: the public ways to hold the projections, each given the course's weights as candidates."""

import numpy as np
import pytest

from grader.module import layouts, wire

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
