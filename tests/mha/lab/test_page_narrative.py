"""The lab's paragraphs are chosen from the numbers: other numbers, other sentences, in both languages; two runs'
losses judged against the measured seed-to-seed noise."""

import re
from dataclasses import replace
from pathlib import Path

import pytest

from mha.lab.cost import AttentionCost, KernelCost
from mha.lab.page import narrative
from mha.lab.page.findings import (
    ORDER_GAP_THRESHOLD,
    HeadsFindings,
    HeadsRun,
    Noise,
    PositionsFindings,
    PositionsRun,
    Spread,
    TrainedScaleFindings,
    scale_findings,
)
from mha.lab.scale import scale_statistics
from mha.lab.settled import SETTLED_FROM
from mha.report.messages import LANGUAGES, Message

NOISE = Noise(sd=0.01, seeds=3, runs=7)  # two means count as different beyond 2 × 0.01 × √(2/3) ≈ 0.0163
MARGIN = NOISE.margin
SETTLED = max(SETTLED_FROM.values())  # a lab trained long enough for every comparison to have settled


def S(mean: float, sd: float = 0.005) -> Spread:  # noqa: N802 - reads as the value it stands for
    """Three seeds around ``mean`` whose sample standard deviation is ``sd``."""
    return Spread((mean - sd, mean, mean + sd))


def test_the_margin_is_two_standard_errors_of_a_difference_of_two_means_of_the_seeds():
    assert MARGIN == pytest.approx(2 * 0.01 * (2 / 3) ** 0.5)
    assert S(1.8, 0.004).sd == pytest.approx(0.004) and S(1.8).mean == pytest.approx(1.8)


def keys(sentences: list[Message]) -> list[str]:
    return [m.key for m in sentences]


def words(sentences: list[Message], language: str = "en") -> str:
    return " ".join(m.text(language) for m in sentences)


# --- positions -------------------------------------------------------------------------------------------


def positions(gap_without: float, best_sinusoidal: float = 1.81) -> PositionsFindings:
    return PositionsFindings(runs=(
        PositionsRun("reference", "learned", S(1.80), S(1.90), S(2.80), S(0.90)),
        PositionsRun("no_positions", "none", S(2.05), S(2.15), S(2.15 + gap_without), S(gap_without)),
        PositionsRun("sinusoidal", "sinusoidal", S(best_sinusoidal), S(1.91), S(2.78), S(0.87)),
    ))


def test_a_model_without_positions_that_uses_order_is_said_to_have_learned_it_from_the_mask():
    learned = narrative.positions_paragraph(positions(0.30), NOISE, SETTLED)
    blind = narrative.positions_paragraph(positions(0.01), NOISE, SETTLED)
    assert "lab_positions_order_from_mask" in keys(learned) and "lab_positions_order_blind" not in keys(learned)
    assert "lab_positions_order_blind" in keys(blind) and "lab_positions_order_from_mask" not in keys(blind)
    assert "from the mask itself" in words(learned) and "permutation invariant" in words(learned)
    assert "did not learn to use order" in words(blind)
    assert "+0.3000" in words(learned) and "+0.0100" in words(blind)


def test_the_order_threshold_is_where_the_statement_turns():
    just_above = narrative.positions_paragraph(positions(ORDER_GAP_THRESHOLD + 1e-6), NOISE, SETTLED)
    at = narrative.positions_paragraph(positions(ORDER_GAP_THRESHOLD), NOISE, SETTLED)
    order = [k for k in keys(just_above) + keys(at) if k.startswith("lab_positions_order_")]
    assert order == ["lab_positions_order_from_mask", "lab_positions_order_blind"]


def test_sinusoidal_positions_are_judged_against_the_reference_s():
    tie = narrative.positions_paragraph(positions(0.3, best_sinusoidal=1.81), NOISE, SETTLED)[1]
    worse = narrative.positions_paragraph(positions(0.3, best_sinusoidal=1.90), NOISE, SETTLED)[1]
    assert tie.values["verdict"].key == "lab_verdict_tie" and worse.values["verdict"].key == "lab_verdict_worse"
    assert "sinusoidal positions instead of learned positions" in words([worse])


def test_the_positions_paragraph_opens_with_what_it_holds_fixed_and_gives_each_kind_s_order_gap():
    sentences = narrative.positions_paragraph(positions(0.3), NOISE, SETTLED)
    assert sentences[0] == Message("lab_positions_controls", {"seeds": 3})
    assert "differ only in the table" in words(sentences[:1]) and "√d_model" in words(sentences[:1])
    assert ("Order is worth +0.8700 ± 0.0050 nats/char to the model with sinusoidal positions (lowest seed "
            "+0.8650), against +0.9000 ± 0.0050 with learned positions") in words(sentences)


# --- heads -----------------------------------------------------------------------------------------------


def heads(best_one_head: float, previous_in_one_head: int = 1, previous_elsewhere: int = 1) -> HeadsFindings:
    def run(n_head: int, best: float, previous: int = 1) -> HeadsRun:
        return HeadsRun(f"h{n_head}", n_head, 128 // n_head, S(best), 404_160,
                        {"previous": previous, "self": 1, "spread": 0}, S(1.5), S(3.0))

    runs = (run(1, best_one_head, previous_in_one_head), run(2, 1.80, previous_elsewhere),
            run(4, 1.79, previous_elsewhere), run(8, 1.84, previous_elsewhere))
    return HeadsFindings(runs=runs, reference=runs[1])


@pytest.mark.parametrize(("best_one_head", "conclusion"), [
    (1.75, "lab_heads_fewer_better"),
    (1.80 + MARGIN / 2, "lab_heads_fewer_as_good"),
    (1.85, "lab_heads_fewer_worse"),
])
def test_whether_fewer_heads_was_as_good_follows_the_losses(best_one_head, conclusion):
    sentences = narrative.heads_paragraph(heads(best_one_head), NOISE, SETTLED)
    found = [k for k in keys(sentences) if k.startswith("lab_heads_fewer_")]
    assert found == [conclusion]


def test_the_heads_paragraph_names_the_best_run_and_no_speed():
    sentences = narrative.heads_paragraph(heads(1.75), NOISE, SETTLED)
    assert sentences[0].key == "lab_heads_best"
    assert sentences[0].values == pytest.approx({"n_head": 1, "d_k": 128, "loss": 1.75, "sd": 0.005, "seeds": 3})
    assert "tokens/s" not in words(sentences)  # the machine's: in the run logs, not on the page
    assert "lab_heads_previous_everywhere" in keys(sentences)
    one_head_elsewhere = heads(1.75, previous_in_one_head=0)
    assert "lab_heads_previous_some" in keys(narrative.heads_paragraph(one_head_elsewhere, NOISE, SETTLED))


def test_a_tie_is_within_the_measured_margin_and_nothing_more():
    assert narrative.verdict(S(1.80 + 0.99 * MARGIN), S(1.80), NOISE).key == "lab_verdict_tie"
    assert narrative.verdict(S(1.80 + 1.01 * MARGIN), S(1.80), NOISE).key == "lab_verdict_worse"
    assert narrative.verdict(S(1.80 - 1.01 * MARGIN), S(1.80), NOISE).key == "lab_verdict_better"
    assert narrative.verdict(S(1.80 - 0.99 * MARGIN), S(1.80), NOISE).key == "lab_verdict_tie"


def test_noisier_seeds_turn_the_same_difference_into_a_tie():
    quiet, noisy = Noise(sd=0.005, seeds=3, runs=7), Noise(sd=0.05, seeds=3, runs=7)
    assert narrative.verdict(S(1.83), S(1.80), quiet).key == "lab_verdict_worse"
    assert narrative.verdict(S(1.83), S(1.80), noisy).key == "lab_verdict_tie"
    assert "within the 0.0816 that seed-to-seed noise explains" in words([narrative.verdict(S(1.83), S(1.80), noisy)])


# --- the scale -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("d_ks", "shape"), [
    ([2**i for i in range(10)], "lab_scale_jacobian_rises_then_falls"),  # the groundwork's finding: a peak near 16
    ([64, 128, 256, 512], "lab_scale_jacobian_falls"),  # past the peak only: the course's story
    ([1, 2, 4], "lab_scale_jacobian_never_falls"),  # before it only
])
def test_the_jacobian_sentence_follows_the_measured_curve(d_ks, shape):
    findings = scale_findings(scale_statistics(d_ks, samples=64, row_length=64, seed=0))
    found = [k for k in keys(narrative.scale_paragraph(findings)) if k.startswith("lab_scale_jacobian_")]
    assert found[0] == shape


def test_the_scale_paragraph_says_the_variance_follows_d_k_and_where_the_peak_is():
    findings = scale_findings(scale_statistics([2**i for i in range(10)], samples=64, row_length=64, seed=0))
    text = words(narrative.scale_paragraph(findings))
    assert "follows the course's line d_k" in text and "about 1" in text
    assert f"at d_k = {findings.jacobian_unscaled_peak_d_k}" in text and findings.jacobian_unscaled_peak_d_k == 16


def trained(unscaled_best: float, unscaled_entropy: float) -> TrainedScaleFindings:
    return TrainedScaleFindings(n_head=1, d_k=128, scaled_best=S(1.81), unscaled_best=S(unscaled_best),
                                scaled_entropy=S(0.9, 0.01), unscaled_entropy=S(unscaled_entropy, 0.01))


def test_the_trained_pair_s_paragraph_follows_its_loss_and_entropy():
    costly = narrative.trained_scale_paragraph(trained(1.90, 0.2), NOISE, SETTLED)
    free = narrative.trained_scale_paragraph(trained(1.815, 1.3), NOISE, SETTLED)
    assert costly[1].values["verdict"].key == "lab_verdict_worse" and costly[3].key == "lab_scale_entropy_sharper"
    assert costly[2].key == "lab_sign_agrees"  # worse without the scale, as after 2,200 steps on a GPU
    assert free[1].values["verdict"].key == "lab_verdict_tie" and free[2].key == "lab_scale_entropy_flatter"
    assert narrative.trained_scale_paragraph(trained(1.81, 0.92), NOISE, SETTLED)[2].key == "lab_scale_entropy_same"
    better = narrative.trained_scale_paragraph(trained(1.70, 0.92), NOISE, SETTLED)  # better without: not the GPU's
    assert better[1].values["verdict"].key == "lab_verdict_better" and better[2].key == "lab_sign_disagrees"
    assert better[2].values["trained"] == pytest.approx(1.6589 - 1.5230)


# --- settled comparisons only ---------------------------------------------------------------------------


def test_a_lab_shorter_than_a_comparison_takes_to_settle_gives_it_no_verdict():
    short = 200  # the heads' and sinusoidal positions' comparisons reverse up to 1,000 steps; √d_k's up to 500
    scale = narrative.trained_scale_paragraph(trained(1.90, 0.2), NOISE, short)
    assert scale[1].key == "lab_unsettled" and scale[1].values["settled"] == SETTLED_FROM["scale"] == 500
    assert "lab_scale_trained_verdict" not in keys(scale) and "lab_holds_from" not in keys(scale)
    heads_keys = keys(narrative.heads_paragraph(heads(1.75), NOISE, short))
    assert heads_keys.count("lab_unsettled") == 3  # h = 1, 4 and 8 against h = 2
    assert not {"lab_heads_best", "lab_heads_fewer", "lab_heads_more", "lab_heads_fewer_better"} & set(heads_keys)
    places = narrative.positions_paragraph(positions(0.3), NOISE, short)
    assert keys(places).count("lab_unsettled") == 1  # sinusoidal; no positions is worse at every length
    assert "lab_positions_none_versus" in keys(places)
    assert [m.values["settled"] for m in places if m.key == "lab_holds_from"] == [SETTLED_FROM["positions_none"]]


def test_at_500_steps_the_scale_and_one_head_are_stated_with_the_length_they_hold_from():
    scale = narrative.trained_scale_paragraph(trained(1.90, 0.2), NOISE, 500)
    assert scale[1].values["verdict"].key == "lab_verdict_worse" and scale[-1].key == "lab_holds_from"
    sentences = narrative.heads_paragraph(heads(1.85), NOISE, 500)
    assert "lab_heads_best" not in keys(sentences)  # the ranking settles at 1,000
    assert [m.values["n_head"] for m in sentences if m.key == "lab_heads_fewer"] == [1]
    assert [m.values["settled"] for m in sentences if m.key == "lab_holds_from"] == [500]
    assert keys(narrative.heads_paragraph(heads(1.85), NOISE, 1000)).count("lab_holds_from") == 3


# --- both languages --------------------------------------------------------------------------------------


def every_variant() -> list[Message]:
    sentences = []
    for gap in (0.3, 0.0):
        sentences += narrative.positions_paragraph(positions(gap, 1.70), NOISE, SETTLED)
    for best, previous, elsewhere in ((1.70, 1, 1), (1.80, 0, 1), (1.90, 0, 0)):
        sentences += narrative.heads_paragraph(heads(best, previous, elsewhere), NOISE, SETTLED)
    for d_ks in ([2**i for i in range(10)], [64, 128, 256, 512], [1, 2, 4]):
        sentences += narrative.scale_paragraph(scale_findings(scale_statistics(d_ks, 64, 64, 0)))
    off = replace(scale_findings(scale_statistics([1, 16, 512], 64, 64, 0)), variance_worst_z=9.0,
                  jacobian_scaled_high=0.5)
    sentences += narrative.scale_paragraph(off)
    for best, entropy in ((1.90, 0.2), (1.815, 1.3), (1.70, 0.9)):
        sentences += narrative.trained_scale_paragraph(trained(best, entropy), NOISE, SETTLED)
    sentences += narrative.trained_scale_paragraph(trained(1.90, 0.2), NOISE, 200)  # an unsettled comparison
    for cost in cost_variants():
        sentences += narrative.cost_paragraph(cost, 128)
    return sentences


def attention_cost(lengths, linear, square, explicit_bytes, fused_bytes) -> AttentionCost:
    return AttentionCost(
        lengths=tuple(lengths), batch=2, n_embd=128, n_head=2, linear_flops=tuple(map(linear, lengths)),
        square_flops=tuple(map(square, lengths)),
        kernels=(KernelCost(kernel="explicit", saved_bytes=tuple(map(explicit_bytes, lengths))),
                 KernelCost(kernel="sdpa", saved_bytes=tuple(map(fused_bytes, lengths)))))


def cost_variants() -> list[AttentionCost]:
    """As the course's layer measures (operations square at the longest lengths, the fused kernel linear in
    memory), and the reverse of each on other lengths (no 256: doubling block_size 128 unmeasured)."""
    measured = attention_cost([64, 128, 256, 512, 1024, 2048], lambda T: 1572864 * T, lambda T: 6144 * T**2,
                              lambda T: 10240 * T + 32 * T**2, lambda T: 12320 * T)
    reverse = attention_cost([64, 128, 512, 1024, 2048], lambda T: 10**9 * T, lambda T: T**2,
                             lambda T: 100 * T + 16 * T**2, lambda T: 100 * T + 4 * T**2)
    return [measured, reverse]


def test_the_cost_paragraph_follows_the_measured_exponents():
    measured, reverse = (keys(narrative.cost_paragraph(cost, 128)) for cost in cost_variants())
    assert measured == ["lab_cost_memory_explicit", "lab_cost_memory_fused_linear", "lab_cost_work_square",
                        "lab_cost_time", "lab_cost_doubling"]
    assert reverse == ["lab_cost_memory_explicit", "lab_cost_memory_fused_square", "lab_cost_work_below_square",
                       "lab_cost_time", "lab_cost_doubling_unmeasured"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_sentence_renders_in_both_languages_with_its_numbers_in_that_language(language):
    text = words(every_variant(), language)
    assert "{" not in text and "}" not in text
    decimals = re.findall(r"\d([.,])\d{4}\b", text)
    assert decimals and set(decimals) == {"." if language == "en" else ","}


def test_the_variants_above_reach_every_sentence_the_narrative_can_choose():
    source = Path(narrative.__file__).read_text(encoding="utf-8")
    chosen = set(re.findall(r'"(lab_[a-z_]+[a-z])"', source))  # the kinds of positions are keys built at run time
    variants = every_variant()
    used = {m.key for m in variants} | {m.values[name].key for m in variants for name in ("verdict", "comparison")
                                         if name in m.values}
    assert len(chosen) > 25 and chosen - used == set()


def test_a_variance_off_the_line_is_said_to_depart_from_it():
    findings = replace(scale_findings(scale_statistics([1, 16, 512], 64, 64, 0)), variance_worst_z=9.0)
    assert keys(narrative.scale_paragraph(findings))[:2] == ["lab_scale_variance_departs", "lab_scale_scaled_off"]
