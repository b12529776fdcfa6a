"""The lab's paragraphs, judged from the findings and worded later: each function returns the sentences as
messages (a catalog key and its numbers), chosen by comparing measurements against the margins of
mha.lab.page.findings: two runs' losses against the measured seed-to-seed noise (findings.Noise), each number a
mean over seeds with its spread beside it. A comparison gets a verdict only where the lab trained at least as
long as it takes to settle (mha.lab.settled, measured on a GPU), and then says from which length it holds; a
shorter lab says it has none. The page words them in its language (mha.report.messages); the tests read the keys.
"""

from __future__ import annotations

from mha.lab.cost import AttentionCost, doubling, kernel_findings, work_findings
from mha.lab.page.findings import (
    ENTROPY_MARGIN,
    ORDER_GAP_THRESHOLD,
    SATURATED_WEIGHT,
    VARIANCE_Z,
    HeadsFindings,
    Noise,
    PositionsFindings,
    ScaleFindings,
    Spread,
    TrainedScaleFindings,
)
from mha.lab.settled import COMPARISONS, TRAINED_LENGTH, difference, holds_at, settled_from
from mha.report.messages import Message

# The scaled softmax's Jacobian norm "stays level" when its largest value is within this factor of its smallest.
LEVEL_FACTOR = 2.0


def verdict(loss: Spread, baseline: Spread, noise: Noise) -> Message:
    """How the mean of ``loss`` compares with that of ``baseline`` (lower is better): a tie within noise.margin;
    with the difference seed by seed (each seed's run against the baseline's run with the same seed)."""
    diff = loss.mean - baseline.mean
    per_seed = [a - b for a, b in zip(loss.values, baseline.values, strict=True)]
    values = {"margin": noise.margin, "low": min(per_seed), "high": max(per_seed)}
    if diff < -noise.margin:
        return Message("lab_verdict_better", {"diff": -diff, **values})
    if diff > noise.margin:
        return Message("lab_verdict_worse", {"diff": diff, **values})
    return Message("lab_verdict_tie", {"diff": abs(diff), **values})


def trained_sign(comparison: str, loss: Spread, baseline: Spread, noise: Noise) -> Message | None:
    """Whether a difference beyond the noise has the sign the same comparison has in the trained models
    (mha.lab.settled, TRAINED_LENGTH steps); None for a tie or a comparison the table does not hold."""
    diff = loss.mean - baseline.mean
    if abs(diff) <= noise.margin or comparison not in COMPARISONS:
        return None
    trained = difference(comparison, TRAINED_LENGTH)
    values = {"trained": trained, "steps": TRAINED_LENGTH}
    return Message("lab_sign_agrees" if diff * trained > 0 else "lab_sign_disagrees", values)


def stated(comparison: str, sentence: Message, loss: Spread, baseline: Spread, noise: Noise) -> list[Message]:
    """A verdict's sentence, then whether it agrees in sign with the trained models."""
    sign = trained_sign(comparison, loss, baseline, noise)
    return [sentence] if sign is None else [sentence, sign]


def position_kind(kind: str) -> Message:
    return Message(f"lab_positions_kind_{kind}")


def settled(comparison: str, named: Message) -> Message | None:
    """After a stated verdict: from which length it holds (None where that was not measured)."""
    length = settled_from(comparison)
    return None if length is None else Message("lab_holds_from", {"comparison": named, "settled": length})


def unsettled(comparison: str, named: Message, steps: int) -> Message:
    """In place of a verdict the lab trained too briefly to give."""
    return Message("lab_unsettled", {"comparison": named, "steps": steps, "settled": settled_from(comparison)})


def heads_comparison(n_head: int, reference: int) -> tuple[str, Message]:
    return f"heads_{n_head}", Message("lab_comparison_heads", {"n_head": n_head, "reference": reference})


def positions_comparison(kind: str, reference: str) -> tuple[str, Message]:
    return f"positions_{kind}", Message("lab_comparison_positions", {"kind": position_kind(kind),
                                                                     "reference": position_kind(reference)})


def scale_paragraph(s: ScaleFindings) -> list[Message]:
    """What random vectors show about the scale: variance, saturation, the softmax's gradient."""
    span = {"first": s.d_k_first, "last": s.d_k_last}
    follows = s.variance_worst_z <= VARIANCE_Z
    worst = {"z_limit": VARIANCE_Z, "worst_d_k": s.variance_worst_d_k}  # said only when the variance departs
    variance = {**span, "z": s.variance_worst_z, "z_limit": VARIANCE_Z, "low": s.variance_ratio_low,
                "high": s.variance_ratio_high}
    scaled = {**span, "low": s.scaled_variance_low, "high": s.scaled_variance_high, "growth": s.variance_growth}
    sentences = [Message("lab_scale_variance_follows", variance) if follows
                 else Message("lab_scale_variance_departs", {**variance, **worst}),
                 Message("lab_scale_scaled_near_one", scaled) if follows
                 else Message("lab_scale_scaled_off", {**scaled, **worst})]
    saturation = {"last": s.d_k_last, "n": s.row_length, "weight": s.weight_unscaled_last,
                  "weight_scaled": s.weight_scaled_last, "entropy": s.entropy_unscaled_last,
                  "entropy_scaled": s.entropy_scaled_last, "uniform": s.uniform_entropy}
    sentences.append(Message("lab_scale_saturated", saturation) if s.weight_unscaled_last > SATURATED_WEIGHT
                     else Message("lab_scale_not_saturated", {**saturation, "saturated": SATURATED_WEIGHT}))
    ends = {"first_norm": s.jacobian_unscaled_first, "last": s.d_k_last, "last_norm": s.jacobian_unscaled_last}
    if s.jacobian_unscaled_peak_d_k == s.d_k_first:
        sentences.append(Message("lab_scale_jacobian_falls", {**ends, "first": s.d_k_first}))
    elif s.jacobian_unscaled_peak_d_k == s.d_k_last:
        sentences.append(Message("lab_scale_jacobian_never_falls", ends))
    else:
        sentences.append(Message("lab_scale_jacobian_rises_then_falls", {
            **ends, "first": s.d_k_first, "peak": s.jacobian_unscaled_peak,
            "peak_d_k": s.jacobian_unscaled_peak_d_k, "uniform": 1 / s.row_length}))
    level = s.jacobian_scaled_high <= LEVEL_FACTOR * s.jacobian_scaled_low
    sentences.append(Message("lab_scale_jacobian_scaled_level" if level else "lab_scale_jacobian_scaled_moves",
                             {"low": s.jacobian_scaled_low, "high": s.jacobian_scaled_high}))
    return sentences


def trained_scale_paragraph(s: TrainedScaleFindings, noise: Noise, steps: int) -> list[Message]:
    """The same model trained with and without the scale (for ``steps`` steps): its loss and how spread its
    attention is."""
    named = Message("lab_comparison_scale")
    holds = holds_at("scale", steps)
    sentences = [
        Message("lab_scale_trained_numbers", {"n_head": s.n_head, "d_k": s.d_k, "unscaled": s.unscaled_best.mean,
                                              "unscaled_sd": s.unscaled_best.sd, "scaled": s.scaled_best.mean,
                                              "scaled_sd": s.scaled_best.sd, "seeds": noise.seeds}),
        *(stated("scale", Message("lab_scale_trained_verdict",
                                  {"verdict": verdict(s.unscaled_best, s.scaled_best, noise)}),
                 s.unscaled_best, s.scaled_best, noise) if holds
          else [unsettled("scale", named, steps)]),
    ]
    values = {"unscaled": s.unscaled_entropy.mean, "unscaled_sd": s.unscaled_entropy.sd,
              "scaled": s.scaled_entropy.mean, "scaled_sd": s.scaled_entropy.sd}
    if s.unscaled_entropy.mean < s.scaled_entropy.mean - ENTROPY_MARGIN:
        sentences.append(Message("lab_scale_entropy_sharper", values))
    elif s.unscaled_entropy.mean > s.scaled_entropy.mean + ENTROPY_MARGIN:
        sentences.append(Message("lab_scale_entropy_flatter", values))
    else:
        sentences.append(Message("lab_scale_entropy_same", {**values, "margin": ENTROPY_MARGIN}))
    holds_from = settled("scale", named) if holds else None
    return sentences + ([holds_from] if holds_from is not None else [])


def heads_paragraph(h: HeadsFindings, noise: Noise, steps: int) -> list[Message]:
    """When fewer heads did as well, from the losses of runs of ``steps`` steps, for the comparisons settled by
    then (the best run only when all are); what the heads attend to (speed is the machine's: the page leaves it
    out)."""
    ref = h.reference
    best = h.best
    others = [run for run in h.runs if run is not ref]
    holding = [run for run in others if holds_at(heads_comparison(run.n_head, ref.n_head)[0], steps)]
    sentences = []
    if len(holding) == len(others):
        sentences.append(Message("lab_heads_best", {"n_head": best.n_head, "d_k": best.d_k,
                                                    "loss": best.best_val_loss.mean, "sd": best.best_val_loss.sd,
                                                    "seeds": noise.seeds}))
    holds_from = []
    for run in others:
        comparison, named = heads_comparison(run.n_head, ref.n_head)
        if run not in holding:
            sentences.append(unsettled(comparison, named, steps))
            continue
        sentences += stated(comparison, Message(
            "lab_heads_fewer" if run.n_head < ref.n_head else "lab_heads_more",
            {"n_head": run.n_head, "d_k": run.d_k, "reference": ref.n_head,
             "verdict": verdict(run.best_val_loss, ref.best_val_loss, noise)}), run.best_val_loss, ref.best_val_loss,
            noise)
        holds_from.append(settled(comparison, named))
    fewer = [r for r in holding if r.n_head < ref.n_head]
    diffs = {r.n_head: r.best_val_loss.mean - ref.best_val_loss.mean for r in fewer}
    better = [n for n, diff in diffs.items() if diff < -noise.margin]
    as_good = [n for n, diff in diffs.items() if abs(diff) <= noise.margin]
    if better:
        sentences.append(Message("lab_heads_fewer_better", {"heads": list_of(better), "reference": ref.n_head}))
    elif as_good:
        sentences.append(Message("lab_heads_fewer_as_good", {"heads": list_of(as_good), "reference": ref.n_head,
                                                             "margin": noise.margin}))
    elif fewer:
        sentences.append(Message("lab_heads_fewer_worse", {"reference": ref.n_head, "margin": noise.margin}))
    with_previous = [r.n_head for r in h.runs if r.heads_by_kind["previous"]]
    if len(with_previous) == len(h.runs):
        sentences.append(Message("lab_heads_previous_everywhere"))
    elif with_previous:
        sentences.append(Message("lab_heads_previous_some", {"heads": list_of(with_previous)}))
    else:
        sentences.append(Message("lab_heads_previous_none"))
    return sentences + [m for m in holds_from if m is not None]


def positions_paragraph(p: PositionsFindings, noise: Noise, steps: int) -> list[Message]:
    """What the comparison holds fixed; what each kind of positions was worth (where settled at ``steps`` steps)
    and how much order each model uses; whether the model without positions still uses order."""
    ref = p.reference
    sentences = [Message("lab_positions_controls", {"seeds": noise.seeds})]
    holds_from = []
    for run in p.others:
        comparison, named = positions_comparison(run.positions, ref.positions)
        if holds_at(comparison, steps):
            sentences += stated(comparison, Message("lab_positions_versus", {
                "kind": position_kind(run.positions), "reference": position_kind(ref.positions),
                "verdict": verdict(run.best_val_loss, ref.best_val_loss, noise)}), run.best_val_loss,
                ref.best_val_loss, noise)
            holds_from.append(settled(comparison, named))
        else:
            sentences.append(unsettled(comparison, named, steps))
        sentences.append(Message("lab_positions_kind_gap", {
            "kind": position_kind(run.positions), "gap": run.gap.mean, "sd": run.gap.sd, "low": run.gap.low,
            "reference": position_kind(ref.positions), "reference_gap": ref.gap.mean, "reference_sd": ref.gap.sd}))
    without = p.without
    if without is None:
        return sentences + [m for m in holds_from if m is not None]
    comparison, named = positions_comparison(without.positions, ref.positions)
    if holds_at(comparison, steps):
        sentences += stated(comparison, Message("lab_positions_none_versus", {
            "reference": position_kind(ref.positions),
            "verdict": verdict(without.best_val_loss, ref.best_val_loss, noise)}), without.best_val_loss,
            ref.best_val_loss, noise)
        holds_from.append(settled(comparison, named))
    else:
        sentences.append(unsettled(comparison, named, steps))
    sentences.append(Message("lab_positions_gaps", {"gap": without.gap.mean, "sd": without.gap.sd,
                                                    "reference": position_kind(ref.positions),
                                                    "reference_gap": ref.gap.mean, "reference_sd": ref.gap.sd}))
    values = {"threshold": ORDER_GAP_THRESHOLD}
    if without.gap.mean > ORDER_GAP_THRESHOLD:
        sentences.append(Message("lab_positions_order_from_mask", values))
    else:
        sentences.append(Message("lab_positions_order_blind", values))
    return sentences + [m for m in holds_from if m is not None]


def list_of(numbers: list[int]) -> str:
    """1, 2 and 4 as the catalog's templates print a list: '1, 2, 4' (numbers in any language)."""
    return ", ".join(str(n) for n in numbers)


# The operations "grow as the square" over the longest lengths when their fitted exponent there is at least this;
# below it the linear part (the projections) still weighs at the lengths measured.
NEAR_SQUARE = 1.75
# The fused kernel "keeps nothing quadratic" when the quadratic part of its memory is below this share at the
# longest length.
NO_SQUARE_SHARE = 0.01


def cost_paragraph(cost: AttentionCost, block_size: int) -> list[Message]:
    """What one attention layer keeps and does as T grows (mha.lab.cost), for each kernel, and what doubling
    block_size costs. No time: it is the machine's (the stage's run log), and the page is the same everywhere."""
    explicit = kernel_findings(cost, cost.kernel("explicit"))
    fused = kernel_findings(cost, cost.kernel("sdpa"))
    work = work_findings(cost)
    longest = {"longest": explicit.longest}
    sentences = [Message("lab_cost_memory_explicit", {
        **longest, "per_square": explicit.bytes_per_square, "batch": cost.batch, "n_head": cost.n_head,
        "share": explicit.memory_fit.share_quadratic(explicit.longest), "mib": explicit.saved_longest / 2**20,
        "slope": explicit.memory_slope_long})]
    fused_memory = {**longest, "slope": fused.memory_slope_long, "mib": fused.saved_longest / 2**20}
    fused_share = fused.memory_fit.share_quadratic(fused.longest)
    sentences.append(Message("lab_cost_memory_fused_linear", fused_memory) if fused_share < NO_SQUARE_SHARE
                     else Message("lab_cost_memory_fused_square", {**fused_memory, "share": fused_share}))
    sentences.append(Message(
        "lab_cost_work_square" if work.slope_long >= NEAR_SQUARE else "lab_cost_work_below_square",
        {**longest, "gflops": work.gflops_longest, "share": work.square_share_longest, "per_square": work.per_square,
         "batch": cost.batch, "n_embd": cost.n_embd, "slope_long": work.slope_long, "slope": work.slope}))
    sentences.append(Message("lab_cost_time"))
    double = doubling(cost, block_size)
    if double is None:
        sentences.append(Message("lab_cost_doubling_unmeasured", {"block": block_size}))
    else:
        sentences.append(Message("lab_cost_doubling", {"block": block_size, "double": 2 * block_size,
                                                       "work": double[0], "memory": double[1]}))
    return sentences
