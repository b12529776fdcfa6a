"""What attention costs (mha.lab.cost, mha.lab.measure_cost): the fits on known curves, the bytes kept and the
operations counted from the real layer, the times kept apart, and the records read back as written."""

import math
from pathlib import Path

import pytest
import torch

from mha import schema
from mha.lab.cost import (
    ATTENTION_COST,
    COST_TIMES,
    KERNEL_NAMES,
    AttentionCost,
    CostTimes,
    KernelCost,
    cost_metrics,
    doubling,
    kernel_findings,
    linear_and_quadratic,
    loglog_slope,
    time_metrics,
    work_findings,
)
from mha.lab.measure_cost import attention_cost, saved_for_backward
from mha.model import KERNELS, CausalSelfAttention
from mha.params import ParamsError

LENGTHS = [64, 128, 256, 512, 1024, 2048]
PARAMS = Path(__file__).resolve().parents[3] / "params.yaml"


def test_the_kernels_named_without_torch_are_the_model_s():
    assert KERNEL_NAMES == KERNELS


@pytest.mark.parametrize("power", [1.0, 1.5, 2.0])
def test_the_log_log_slope_of_a_power_is_its_exponent(power):
    assert loglog_slope(LENGTHS, [3.0 * T**power for T in LENGTHS]) == pytest.approx(power, abs=1e-12)


def test_a_linear_plus_quadratic_curve_is_split_back_into_its_parts():
    fit = linear_and_quadratic(LENGTHS, [2e-6 * T + 5e-9 * T**2 for T in LENGTHS])
    assert fit.linear == pytest.approx(2e-6, rel=1e-9) and fit.quadratic == pytest.approx(5e-9, rel=1e-9)
    assert fit.share_quadratic(400) == pytest.approx(0.5)  # 2e-6·400 = 5e-9·400²


@pytest.mark.parametrize(("values", "linear", "quadratic"), [
    ([7.0 * T for T in LENGTHS], 7.0, 0.0),  # a linear cost has no quadratic part
    ([4.0 * T**2 for T in LENGTHS], 0.0, 4.0),
    ([5.0 * T**2 - 1e-3 * T for T in LENGTHS], 0.0, None),  # the free fit's linear part is negative: clamped
])
def test_neither_part_of_the_fit_is_negative(values, linear, quadratic):
    fit = linear_and_quadratic(LENGTHS, values)
    assert fit.linear == pytest.approx(linear, abs=1e-9)
    assert fit.quadratic >= 0 and (quadratic is None or fit.quadratic == pytest.approx(quadratic, rel=1e-9))


def measured(model_overrides: dict | None = None, lengths=(16, 32, 64, 128)) -> tuple[AttentionCost, CostTimes]:
    config = schema.model_config(schema.load(PARAMS), **(model_overrides or {}))
    torch.set_num_threads(1)
    return attention_cost(config, lengths=list(lengths), batch=4, repeats=1, seed=0, device=torch.device("cpu"))


@pytest.fixture(scope="module")
def course_layer() -> tuple[AttentionCost, CostTimes]:
    return measured()


def test_the_course_s_steps_keep_the_weights_a_4_bytes_per_entry_for_each_sequence_and_head(course_layer):
    cost, _ = course_layer
    explicit = kernel_findings(cost, cost.kernel("explicit"))
    assert explicit.bytes_per_square == pytest.approx(4 * cost.batch * cost.n_head, rel=1e-9)
    # the rest grows as T: the input x, Q, K and V (one projection, 3·d_model) and the heads' concatenation
    assert explicit.memory_fit.linear == pytest.approx(4 * cost.batch * cost.n_embd * (1 + 3 + 1), rel=1e-9)


def test_the_fused_kernel_keeps_nothing_that_grows_as_t_squared(course_layer):
    cost, _ = course_layer
    fused = kernel_findings(cost, cost.kernel("sdpa"))
    assert fused.memory_fit.quadratic == pytest.approx(0.0, abs=1e-9)
    assert fused.memory_slope_long == pytest.approx(1.0, abs=1e-9)


def test_the_operations_are_the_projections_per_t_and_the_scores_products_per_t_squared(course_layer):
    cost, _ = course_layer
    B, C = cost.batch, cost.n_embd
    # forward and the two products of each backward: 3 × 2·B·T·(3C·C + C·C) and 3 × 2 × 2·B·T²·C
    assert cost.linear_flops == tuple(3 * 2 * B * T * 4 * C * C for T in cost.lengths)
    assert cost.square_flops == tuple(12 * B * C * T**2 for T in cost.lengths)
    assert work_findings(cost).per_square == 12 * B * C


def test_the_times_are_kept_apart_one_median_per_kernel_and_length(course_layer):
    cost, times = course_layer
    assert set(times.seconds) == set(KERNEL_NAMES) and times.lengths == cost.lengths
    assert all(len(s) == len(cost.lengths) and min(s) > 0 for s in times.seconds.values())
    assert set(time_metrics(cost, times)) == set(KERNEL_NAMES)


def test_the_bytes_kept_are_the_same_on_every_run_and_leave_the_weights_out():
    layer = CausalSelfAttention(schema.model_config(schema.load(PARAMS), block_size=32)).eval()
    x = torch.randn(2, 32, layer.c_attn.in_features, requires_grad=True)
    first = saved_for_backward(layer, x)
    assert first == saved_for_backward(layer, x)
    weights = sum(p.numel() * p.element_size() for p in layer.parameters())
    assert first < weights  # no weight counted (they alone are larger than what this short input keeps)


def test_more_heads_keep_more_t_squared_bytes():
    cost, _ = measured({"n_head": 4}, lengths=(16, 32, 48))
    assert kernel_findings(cost, cost.kernel("explicit")).bytes_per_square == pytest.approx(4 * 4 * 4, rel=1e-9)


def test_the_record_reads_back_as_written_and_its_metrics_are_the_findings(tmp_path, course_layer):
    cost, times = course_layer
    ATTENTION_COST.write(tmp_path / "cost.json", cost)
    assert ATTENTION_COST.read(tmp_path / "cost.json") == cost
    COST_TIMES.write(tmp_path / "times.json", times)
    assert COST_TIMES.read(tmp_path / "times.json") == times
    metrics = cost_metrics(cost)
    for kernel in cost.kernels:
        found = kernel_findings(cost, kernel)
        assert metrics[kernel.kernel]["memory_exponent_long"] == round(found.memory_slope_long, 4)
    assert metrics["work"]["flops_exponent_long"] == round(work_findings(cost).slope_long, 4)


def test_doubling_is_measured_only_where_both_lengths_are(course_layer):
    cost, _ = course_layer
    work, memory = doubling(cost, 32)
    saved = cost.kernel("explicit").saved_bytes
    assert memory == pytest.approx(saved[2] / saved[1]) and work == pytest.approx(cost.flops[2] / cost.flops[1])
    assert 2 < memory < 4 and 2 < work < 4  # more than the linear part's 2, less than the square's 4
    assert doubling(cost, 128) is None  # 256 was not measured


def test_a_record_with_a_length_missing_or_a_cost_of_zero_is_refused():
    kernel = KernelCost(kernel="explicit", saved_bytes=(1, 2, 3))
    with pytest.raises(ValueError, match="not positive"):
        KernelCost(kernel="sdpa", saved_bytes=(0, 2, 3))
    with pytest.raises(ValueError, match="one value per length"):
        AttentionCost(lengths=(4, 8, 16), batch=1, n_embd=4, n_head=2, linear_flops=(1, 2), square_flops=(1, 2, 3),
                      kernels=(kernel,))
    with pytest.raises(ValueError, match="increasing"):
        AttentionCost(lengths=(8, 4, 16), batch=1, n_embd=4, n_head=2, linear_flops=(1, 2, 3),
                      square_flops=(1, 2, 3), kernels=(kernel,))


@pytest.mark.parametrize(("cost", "expected"), [
    ({"lengths": [64, 128], "batch": 4, "repeats": 7, "seed": 0}, "lab.cost.lengths must be a list of at least 3"),
    ({"lengths": [64, 32, 128], "batch": 4, "repeats": 7, "seed": 0}, "increasing positive integers"),
    ({"lengths": [8, 16, 32], "batch": 0, "repeats": 7, "seed": 0}, "lab.cost.batch must be a positive integer"),
    ({"lengths": [8, 16, 32], "batch": 1, "repeats": 7}, "lab.cost"),
])
def test_a_bad_lab_cost_section_is_refused_naming_the_key(cost, expected):
    params = schema.load(PARAMS)
    params["lab"]["cost"] = cost
    with pytest.raises(ParamsError, match=expected.replace(".", r"\.")):
        schema.LabConfig.from_params(params)


def test_params_yaml_measures_block_size_and_twice_it():
    params = schema.load(PARAMS)
    lengths = params["lab"]["cost"]["lengths"]
    block = params["model"]["block_size"]
    assert block in lengths and 2 * block in lengths and max(lengths) >= 2048
    assert math.log2(lengths[-1] / lengths[0]) >= 5  # a range wide enough for a slope
