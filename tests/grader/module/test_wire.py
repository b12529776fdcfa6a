"""Question 2's description of a module as it comes back from the sandbox: read from a closed list, every shape
checked before anything is allocated."""

import numpy as np
import pytest

from grader.module import layouts, wire

from .conftest import course_weights


def test_the_masks_given_to_an_inner_multihead_attention_are_read_from_a_closed_list():
    ok = {"params": [], "init": [], "masks": ["key_padding_mask", "key_padding_mask"]}
    assert wire.module_description(ok).masks == ("key_padding_mask",)
    assert wire.module_description({"params": [], "init": []}).masks == ()
    for forged in (["rm -rf /"], "attn_mask", [["attn_mask"]], [3]):
        assert wire.module_description({"params": [], "init": [], "masks": forged}) is None


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
        layouts.candidates(huge, course_weights())
