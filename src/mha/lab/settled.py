"""How long a lab run must train before each of the lab's comparisons stops moving.

The same seven runs were trained on one GPU at 200, 500, 1,000 and 2,200 steps (MEASURED; benchmarks/README.md,
"How long the lab trains"). A comparison holds from the first of those lengths after which its difference keeps
the sign it has at 2,200 steps and at least a third of its size there (`settled_length`); before that, a short
run's answer can be the opposite of a trained model's, so the lab page states no verdict on it
(mha.lab.page.narrative). No torch here: the page reads it.
"""

from __future__ import annotations

# Mean best validation loss (nats/char) of each lab run trained for each length on one GPU: the params.yaml recipe
# with cosine over the length, 2 seeds (3 at 200 steps, the committed CPU lab's).
MEASURED = {
    "reference": {200: 2.0010, 500: 1.6862, 1000: 1.5671, 2200: 1.5080},  # 2 heads, learned positions
    "heads_1": {200: 1.9604, 500: 1.6997, 1000: 1.5891, 2200: 1.5230},
    "heads_4": {200: 2.0680, 500: 1.6971, 1000: 1.5646, 2200: 1.5012},
    "heads_8": {200: 2.1874, 500: 1.7034, 1000: 1.5652, 2200: 1.5031},
    "no_scale": {200: 1.9746, 500: 1.8250, 1000: 1.7493, 2200: 1.6589},  # 1 head without √d_k
    "sinusoidal": {200: 1.9122, 500: 1.6851, 1000: 1.5813, 2200: 1.5208},
    "no_positions": {200: 2.3230, 500: 2.1654, 1000: 1.9589, 2200: 1.7590},
}
# comparison -> (run, the run it is compared with), as the lab page names its comparisons: "scale" (one head
# without √d_k against one head with it), "heads_N" (N heads against the reference's 2), "positions_KIND".
COMPARISONS = {
    "scale": ("no_scale", "heads_1"),
    "heads_1": ("heads_1", "reference"),
    "heads_4": ("heads_4", "reference"),
    "heads_8": ("heads_8", "reference"),
    "positions_sinusoidal": ("sinusoidal", "reference"),
    "positions_none": ("no_positions", "reference"),
}
# The longest length measured: the trained models' answer, which a lab's own runs are checked against in sign.
TRAINED_LENGTH = max(MEASURED["reference"])
# A difference has settled at a length when, from there on, it has the sign it has at the longest length and at
# least this share of its size there: a same-signed sliver that is still growing tenfold is not yet the answer.
SETTLED_SHARE = 1 / 3


def difference(comparison: str, steps: int) -> float:
    """The run's mean best loss minus the one it is compared with, at ``steps`` (one of the measured lengths)."""
    run, baseline = COMPARISONS[comparison]
    return MEASURED[run][steps] - MEASURED[baseline][steps]


def settled_length(comparison: str) -> int:
    """The first measured length from which the comparison's difference has settled (SETTLED_SHARE)."""
    lengths = sorted(MEASURED["reference"])
    final = difference(comparison, TRAINED_LENGTH)
    settled = TRAINED_LENGTH
    for steps in reversed(lengths):
        diff = difference(comparison, steps)
        if diff * final <= 0 or abs(diff) < SETTLED_SHARE * abs(final):
            break
        settled = steps
    return settled


# comparison -> the schedule length (lab.schedule.max_iters) from which its sign holds
SETTLED_FROM = {comparison: settled_length(comparison) for comparison in COMPARISONS}


def settled_from(comparison: str) -> int | None:
    """The length from which ``comparison``'s sign holds, or None where it was not measured."""
    return SETTLED_FROM.get(comparison)


def holds_at(comparison: str, steps: int) -> bool:
    """Whether a lab trained for ``steps`` steps may state ``comparison``: it settled by then. One that was not
    measured at several lengths is stated, as measured."""
    settled = settled_from(comparison)
    return settled is None or steps >= settled
