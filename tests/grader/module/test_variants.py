"""Question 2's variants: the reference computed the way the module's mistakes are."""

import numpy as np

from grader.module import cases, variants
from mha import reference, worked_example

from .conftest import course_weights


def test_the_reference_variant_is_the_reference_and_every_mistake_changes_the_answers():
    ex, W = worked_example.load(), course_weights()
    want = variants.expected(ex.X[None], W)
    assert np.allclose(variants.REF.forward(ex.X[None], W), want, atol=1e-12)
    assert np.allclose(want[0], reference.multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O), atol=1e-12)
    hidden = cases.hidden_cases(0)[0]  # the worked example's W_O is the identity: a missing one shows only here
    for mistake, variant in variants.VARIANTS:
        for x, weights in ((ex.X[None], W), (hidden.x, hidden.weights)):
            if mistake != "missing-output-projection" or weights is not W:
                got = variant.forward(x, weights)
                assert not np.allclose(got, variants.expected(x, weights), equal_nan=True), mistake
