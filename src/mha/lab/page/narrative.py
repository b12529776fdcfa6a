"""The lab's paragraphs, judged from the findings and worded later: each function returns the sentences as
messages (a catalog key and its numbers), chosen by comparing measurements against the margins of
mha.lab.page.findings. The page words them in its language (mha.report.messages); the tests read the keys.
"""

from __future__ import annotations

from mha.lab.page.findings import (
    ENTROPY_MARGIN,
    LOSS_MARGIN,
    ORDER_GAP_THRESHOLD,
    SATURATED_WEIGHT,
    VARIANCE_Z,
    HeadsFindings,
    PositionsFindings,
    ScaleFindings,
    TrainedScaleFindings,
)
from mha.messages import Message

# The scaled softmax's Jacobian norm "stays level" when its largest value is within this factor of its smallest.
LEVEL_FACTOR = 2.0


def verdict(loss: float, baseline: float) -> Message:
    """How ``loss`` compares with ``baseline`` (lower is better), with LOSS_MARGIN as a tie."""
    diff = loss - baseline
    if diff < -LOSS_MARGIN:
        return Message("lab_verdict_better", {"diff": -diff})
    if diff > LOSS_MARGIN:
        return Message("lab_verdict_worse", {"diff": diff})
    return Message("lab_verdict_tie", {"diff": abs(diff), "margin": LOSS_MARGIN})


def position_kind(kind: str) -> Message:
    return Message(f"lab_positions_kind_{kind}")


def scale_paragraph(s: ScaleFindings) -> list[Message]:
    """What random vectors show about the scale: variance, saturation, the softmax's gradient."""
    span = {"first": s.d_k_first, "last": s.d_k_last}
    sentences = [Message(
        "lab_scale_variance_follows" if s.variance_worst_z <= VARIANCE_Z else "lab_scale_variance_departs",
        {**span, "z": s.variance_worst_z, "z_limit": VARIANCE_Z, "worst_d_k": s.variance_worst_d_k,
         "low": s.variance_ratio_low, "high": s.variance_ratio_high})]
    sentences.append(Message(
        "lab_scale_scaled_near_one" if s.variance_worst_z <= VARIANCE_Z else "lab_scale_scaled_off",
        {**span, "low": s.scaled_variance_low, "high": s.scaled_variance_high, "growth": s.variance_growth,
         "z_limit": VARIANCE_Z, "worst_d_k": s.variance_worst_d_k}))
    sentences.append(Message(
        "lab_scale_saturated" if s.weight_unscaled_last > SATURATED_WEIGHT else "lab_scale_not_saturated",
        {"last": s.d_k_last, "n": s.row_length, "weight": s.weight_unscaled_last, "weight_scaled": s.weight_scaled_last,
         "entropy": s.entropy_unscaled_last, "entropy_scaled": s.entropy_scaled_last,
         "uniform": s.uniform_entropy, "saturated": SATURATED_WEIGHT}))
    jacobian = {**span, "first_norm": s.jacobian_unscaled_first, "peak": s.jacobian_unscaled_peak,
                "peak_d_k": s.jacobian_unscaled_peak_d_k, "last_norm": s.jacobian_unscaled_last,
                "uniform": 1 / s.row_length}
    if s.jacobian_unscaled_peak_d_k == s.d_k_first:
        sentences.append(Message("lab_scale_jacobian_falls", jacobian))
    elif s.jacobian_unscaled_peak_d_k == s.d_k_last:
        sentences.append(Message("lab_scale_jacobian_never_falls", jacobian))
    else:
        sentences.append(Message("lab_scale_jacobian_rises_then_falls", jacobian))
    level = s.jacobian_scaled_high <= LEVEL_FACTOR * s.jacobian_scaled_low
    sentences.append(Message("lab_scale_jacobian_scaled_level" if level else "lab_scale_jacobian_scaled_moves",
                             {"low": s.jacobian_scaled_low, "high": s.jacobian_scaled_high}))
    return sentences


def trained_scale_paragraph(s: TrainedScaleFindings) -> list[Message]:
    """The same model trained with and without the scale: its loss and how spread its attention is."""
    sentences = [
        Message("lab_scale_trained_numbers", {"n_head": s.n_head, "d_k": s.d_k, "unscaled": s.unscaled_best,
                                              "scaled": s.scaled_best}),
        Message("lab_scale_trained_verdict", {"verdict": verdict(s.unscaled_best, s.scaled_best)}),
    ]
    values = {"unscaled": s.unscaled_entropy, "scaled": s.scaled_entropy, "margin": ENTROPY_MARGIN}
    if s.unscaled_entropy < s.scaled_entropy - ENTROPY_MARGIN:
        sentences.append(Message("lab_scale_entropy_sharper", values))
    elif s.unscaled_entropy > s.scaled_entropy + ENTROPY_MARGIN:
        sentences.append(Message("lab_scale_entropy_flatter", values))
    else:
        sentences.append(Message("lab_scale_entropy_same", values))
    return sentences


def heads_paragraph(h: HeadsFindings) -> list[Message]:
    """When fewer heads did as well, from the losses; the cost in speed; what the heads attend to."""
    ref = h.reference
    best = h.best
    sentences = [Message("lab_heads_best", {"n_head": best.n_head, "d_k": best.d_k, "loss": best.best_val_loss})]
    for run in h.runs:
        if run is not ref:
            sentences.append(Message(
                "lab_heads_fewer" if run.n_head < ref.n_head else "lab_heads_more",
                {"n_head": run.n_head, "d_k": run.d_k, "reference": ref.n_head,
                 "verdict": verdict(run.best_val_loss, ref.best_val_loss)}))
    fewer = [r for r in h.runs if r.n_head < ref.n_head]
    better = [r.n_head for r in fewer if r.best_val_loss < ref.best_val_loss - LOSS_MARGIN]
    as_good = [r.n_head for r in fewer if abs(r.best_val_loss - ref.best_val_loss) <= LOSS_MARGIN]
    if better:
        sentences.append(Message("lab_heads_fewer_better", {"heads": list_of(better), "reference": ref.n_head}))
    elif as_good:
        sentences.append(Message("lab_heads_fewer_as_good", {"heads": list_of(as_good), "reference": ref.n_head,
                                                             "margin": LOSS_MARGIN}))
    elif fewer:
        sentences.append(Message("lab_heads_fewer_worse", {"reference": ref.n_head, "margin": LOSS_MARGIN}))
    fast, slow = h.fastest, h.slowest
    if fast is not slow:
        sentences.append(Message("lab_heads_speed", {
            "fast": fast.n_head, "fast_speed": fast.tokens_per_second, "slow": slow.n_head,
            "slow_speed": slow.tokens_per_second, "ratio": fast.tokens_per_second / slow.tokens_per_second}))
    with_previous = [r.n_head for r in h.runs if r.heads_by_kind["previous"]]
    if len(with_previous) == len(h.runs):
        sentences.append(Message("lab_heads_previous_everywhere"))
    elif with_previous:
        sentences.append(Message("lab_heads_previous_some", {"heads": list_of(with_previous)}))
    else:
        sentences.append(Message("lab_heads_previous_none"))
    return sentences


def positions_paragraph(p: PositionsFindings) -> list[Message]:
    """What each kind of positions was worth, and whether the model without them still uses order."""
    ref = p.reference
    sentences = [
        Message("lab_positions_versus", {"kind": position_kind(run.positions),
                                         "reference": position_kind(ref.positions),
                                         "verdict": verdict(run.best_val_loss, ref.best_val_loss)})
        for run in p.others
    ]
    without = p.without
    if without is None:
        return sentences
    sentences.append(Message("lab_positions_none_versus", {"reference": position_kind(ref.positions),
                                                           "verdict": verdict(without.best_val_loss,
                                                                              ref.best_val_loss)}))
    sentences.append(Message("lab_positions_gaps", {"gap": without.gap, "reference": position_kind(ref.positions),
                                                    "reference_gap": ref.gap}))
    values = {"gap": without.gap, "threshold": ORDER_GAP_THRESHOLD}
    if without.gap > ORDER_GAP_THRESHOLD:
        sentences.append(Message("lab_positions_order_from_mask", values))
    else:
        sentences.append(Message("lab_positions_order_blind", values))
    return sentences


def list_of(numbers: list[int]) -> str:
    """1, 2 and 4 as the catalog's templates print a list: '1, 2, 4' (numbers in any language)."""
    return ", ".join(str(n) for n in numbers)
