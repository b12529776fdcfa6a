import json
import math
from itertools import pairwise

import numpy as np
import pytest
import torch

from mha.lab.scale import (
    entropy,
    jacobian_spectral_norm,
    scale_statistics,
    score_variance_standard_error,
    softmax_jacobian,
)
from mha.reference import softmax

D_KS = [2**i for i in range(10)]  # 1 … 512


@pytest.fixture(scope="module")
def stats():
    return scale_statistics(D_KS, samples=2000, row_length=16, seed=0)


def test_score_variance_is_d_k_within_five_standard_errors(stats):
    for d_k, variance, error in zip(D_KS, stats.score_variance, stats.score_variance_standard_error, strict=True):
        assert abs(variance - d_k) < 5 * error, (d_k, variance, error)
        assert error < 0.05 * d_k  # tight enough that the line d_k is really being tested


def test_scaled_score_variance_is_one(stats):
    errors = stats.score_variance_standard_error
    for d_k, variance, error in zip(D_KS, stats.scaled_score_variance, errors, strict=True):
        assert abs(variance - 1) < 5 * error / d_k, (d_k, variance)


def test_standard_error_formula_matches_the_spread_of_the_estimate_over_seeds():
    d_k, samples, row_length = 4, 200, 8
    estimates = [scale_statistics([d_k], samples, row_length, seed).score_variance[0] for seed in range(60)]
    measured = np.std(estimates, ddof=1)
    # without the shared-q covariance the formula would give 0.71 of this; 60 seeds pin the ratio to ~10%
    assert measured == pytest.approx(score_variance_standard_error(d_k, samples, row_length), rel=0.25)


def test_without_the_scale_the_softmax_saturates_as_d_k_grows(stats):
    largest, ent, jac = stats.unscaled.largest_weight, stats.unscaled.entropy, stats.unscaled.jacobian_spectral_norm
    assert all(a < b for a, b in pairwise(largest)) and largest[-1] > 0.9
    assert all(a > b for a, b in pairwise(ent)) and ent[-1] < 0.1 * math.log(16)
    # the Jacobian's norm first grows (a nearly uniform row passes 1/n) and then vanishes
    peak = int(np.argmax(jac))
    assert D_KS[peak] <= 32 and all(a > b for a, b in pairwise(jac[peak:]))
    assert jac[-1] < 0.5 * jac[peak]


def test_with_the_scale_the_softmax_stays_level(stats):
    # from d_k = 2 on; at d_k = 1 a row's scores are one scalar q times k_j, so rows with a small |q| are
    # nearly uniform, and the mean Jacobian norm there is 20% below the rest
    for name in ("largest_weight", "entropy", "jacobian_spectral_norm"):
        scaled, unscaled = np.array(getattr(stats.scaled, name)[1:]), np.array(getattr(stats.unscaled, name)[1:])
        assert scaled.max() / scaled.min() < 1.2, (name, scaled)
        assert unscaled.max() / unscaled.min() > 2, (name, unscaled)  # what level is being contrasted with


def test_softmax_jacobian_is_autograds_jacobian_of_softmax():
    rows = torch.tensor([[0.3, -1.2, 2.0, 0.0], [40.0, 0.0, -3.0, 1.0], [1.0, 1.0, 1.0, 1.0]], dtype=torch.float64)
    for s in rows:
        expected = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, dim=0), s)  # (n, n)
        got = softmax_jacobian(softmax(s[None].numpy())[0])  # (n, n)
        np.testing.assert_allclose(got, expected.numpy(), rtol=0, atol=1e-15)
    batch = softmax_jacobian(softmax(rows.numpy()))  # (3, n, n)
    assert batch.shape == (3, 4, 4) and np.abs(batch[0] - batch[1]).max() > 0.1


@pytest.mark.parametrize("spread", [0.1, 2.0, 30.0])  # nearly uniform rows … nearly one-hot rows
def test_jacobian_spectral_norm_is_the_largest_singular_value(spread):
    scores = np.random.default_rng(0).normal(0, spread, (200, 9))  # (200, 9)
    scores[:20, 1] = scores[:20, 0]  # ties for the largest weight
    p = softmax(scores)  # (200, 9)
    expected = np.linalg.norm(softmax_jacobian(p), 2, axis=(1, 2))  # (200,), by SVD
    # absolute 1e-15: the SVD's own accuracy is ε‖J‖, and nearly one-hot rows have norms far below that
    np.testing.assert_allclose(jacobian_spectral_norm(p), expected, rtol=1e-12, atol=1e-15)
    special = np.array([[0.25] * 4, [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]])  # uniform, one-hot, two keys
    np.testing.assert_allclose(jacobian_spectral_norm(special), [0.25, 0.0, 0.5], atol=1e-15)


def test_entropy_is_ln_n_for_a_uniform_row_and_zero_for_a_one_hot_row():
    np.testing.assert_allclose(entropy(np.array([[0.25] * 4, [0.0, 1.0, 0.0, 0.0]])), [math.log(4), 0.0], atol=1e-15)


def test_statistics_are_deterministic_per_seed_and_per_d_k():
    a = scale_statistics([2, 64], samples=50, row_length=4, seed=3)
    assert a == scale_statistics([2, 64], samples=50, row_length=4, seed=3)
    assert a.score_variance != scale_statistics([2, 64], samples=50, row_length=4, seed=4).score_variance
    alone = scale_statistics([64], samples=50, row_length=4, seed=3)  # one d_k's numbers do not depend on the others
    assert alone.score_variance[0] == a.score_variance[1] and alone.scaled.entropy[0] == a.scaled.entropy[1]


def test_statistics_write_as_json_with_one_value_per_d_k():
    record = json.loads(json.dumps(scale_statistics([1, 8, 512], samples=10, row_length=3, seed=0).to_dict()))
    assert record["d_k"] == [1, 8, 512] and record["row_length"] == 3
    for values in (record["score_variance"], record["unscaled"]["entropy"], record["scaled"]["jacobian_spectral_norm"]):
        assert len(values) == 3 and all(isinstance(v, float) for v in values)


@pytest.mark.parametrize(
    "d_ks, samples, row_length, named",
    [([], 10, 4, "d_ks"), ([0, 2], 10, 4, "d_ks"), ([2], 1, 4, "samples"), ([2], 10, 1, "row_length"),
     ([2], 10.0, 4, "samples")],
)
def test_bad_arguments_are_refused_by_name(d_ks, samples, row_length, named):
    with pytest.raises(ValueError, match=named):
        scale_statistics(d_ks, samples, row_length, seed=0)
