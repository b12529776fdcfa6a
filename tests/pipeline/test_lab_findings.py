"""The lab page's findings against the lab's own metrics: every verdict it states is the difference of the runs'
mean best losses (metrics/lab), it states one exactly for the comparisons settled at the schedule the runs trained
for (mha.lab.settled), with the length each holds from; on the committed page (docs/pages/lab.html), every
difference beyond the noise has the sign the same comparison has after 2,200 steps on a GPU."""

import csv
import html as html_module
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mha.lab.page.inputs import load_lab
from mha.lab.page.render import render_lab_page
from mha.lab.settled import COMPARISONS, MEASURED, SETTLED_FROM, difference
from mha.schema import ReportConfig

REPO = Path(__file__).resolve().parents[2]
PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())
TEMPLATES = REPO / "pipeline" / "templates"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
LAB = FIXTURES / "lab"
_spec = importlib.util.spec_from_file_location("lab_fixtures", FIXTURES / "make_lab_fixtures.py")
lab_fixtures = importlib.util.module_from_spec(_spec)
sys.modules["lab_fixtures"] = lab_fixtures  # its dataclasses look their module up
_spec.loader.exec_module(lab_fixtures)
VERDICT = r"(?:(?P<diff>\d\.\d{4}) nats/char (?P<way>lower|higher)|level with it \((?P<tie>\d\.\d{4}) apart)"
# comparison -> the English sentence that states its verdict (mha/report/messages.toml, lab_* keys)
STATED = {
    "scale": r"Without the scale the loss was " + VERDICT,
    "heads_1": r"h = 1 \(d_k = \d+\) instead of the reference's h = 2, the best validation loss was " + VERDICT,
    "heads_4": r"h = 4 \(d_k = \d+\) instead of h = 2, the loss was " + VERDICT,
    "heads_8": r"h = 8 \(d_k = \d+\) instead of h = 2, the loss was " + VERDICT,
    "positions_sinusoidal": r"With sinusoidal positions instead of learned positions, the best validation loss was "
                            + VERDICT,
    "positions_none": r"Without any positional information the loss was " + VERDICT,
}
UNSETTLED = r"The comparison (?:of h = (?P<h>\d+) with h = 2|of (?P<kind>\w+) positions with learned positions|" \
            r"(?P<scale>without and with the scale)) gets no verdict at (?P<steps>\d+) steps"


def page_text(page: str) -> str:
    text = re.sub(r"<[^>]+>", " ", page)
    return " ".join(html_module.unescape(text).split())


def mean_best(metrics: Path, run: str, seeds: list[int]) -> float:
    return float(np.mean([json.loads((metrics / run / f"{seed}.json").read_text())["best_val_loss"]
                          for seed in seeds]))


def check_findings(text: str, metrics: Path, seeds: list[int], steps: int) -> list[str]:
    """Every comparison of the page against the lab's metrics (``metrics``/RUN/SEED.json) at ``steps`` steps: a
    verdict exactly when settled, equal to the difference of the mean best losses, with the length it holds from;
    the comparisons stated, in order."""
    stated_list = []
    for comparison, pattern in STATED.items():
        match = re.search(pattern, text)
        assert (match is not None) == (steps >= SETTLED_FROM[comparison]), comparison
        if match is None:
            continue
        stated_list.append(comparison)
        run, baseline = COMPARISONS[comparison]
        ours = mean_best(metrics, run, seeds) - mean_best(metrics, baseline, seeds)
        if match["tie"]:
            assert abs(ours) == pytest.approx(float(match["tie"]), abs=1e-4), comparison
        else:
            stated = float(match["diff"]) * (1 if match["way"] == "higher" else -1)
            assert ours == pytest.approx(stated, abs=1e-4), comparison
        assert f"{COMPARISON_NAMES[comparison]} holds from {SETTLED_FROM[comparison]} steps on." in text
    unsettled = {("scale" if m["scale"] else f"heads_{m['h']}" if m["h"] else f"positions_{m['kind']}")
                 for m in re.finditer(UNSETTLED, text)}
    assert unsettled == {c for c in STATED if steps < SETTLED_FROM[c]}
    assert all(int(m["steps"]) == steps for m in re.finditer(UNSETTLED, text))
    return stated_list


def fixture_page(root: Path) -> str:
    lab = yaml.safe_load((root / "params.yaml").read_text())["lab"]
    return render_lab_page(load_lab(lab_fixtures.folders(root), list(lab["runs"]), lab["seeds"]), TEMPLATES,
                           ReportConfig(language="en", bigram_k=0.1))


def test_a_lab_trained_long_enough_states_every_comparison_with_the_length_it_holds_from():
    steps = yaml.safe_load((LAB / "params.yaml").read_text())["lab"]["schedule"]["max_iters"]
    assert steps >= max(SETTLED_FROM.values())
    seeds = yaml.safe_load((LAB / "params.yaml").read_text())["lab"]["seeds"]
    assert check_findings(page_text(fixture_page(LAB)), LAB / "metrics", seeds, steps) == list(STATED)


def test_a_lab_of_200_steps_states_only_what_holds_from_200_steps(tmp_path):
    root = tmp_path / "lab"
    shutil.copytree(LAB, root)
    for record in (root / "models").glob("*/*.json"):  # the same runs, as trained for 200 steps
        values = json.loads(record.read_text())
        values["train"]["max_iters"] = 200
        record.write_text(json.dumps(values))
    text = page_text(fixture_page(root))
    seeds = yaml.safe_load((root / "params.yaml").read_text())["lab"]["seeds"]
    assert check_findings(text, root / "metrics", seeds, 200) == ["positions_none"]
    assert "keep its sign" in text or "keeps its sign" in text  # the page says why the others have no verdict


def test_the_committed_lab_page_states_only_settled_findings_with_the_trained_models_signs():
    page = (REPO / "docs" / "pages" / "lab.html").read_text(encoding="utf-8")
    assert PARAMS["report"]["language"] == "en"  # the sentences above are the English ones
    steps = trained_steps()
    assert steps == {PARAMS["lab"]["schedule"]["max_iters"]}  # the committed curves are params.yaml's schedule
    text = page_text(page)
    for comparison in check_findings(text, REPO / "metrics" / "lab", PARAMS["lab"]["seeds"], steps.pop()):
        match = re.search(STATED[comparison], text)
        if not match["tie"]:  # a difference beyond the noise has the sign it has after 2,200 steps on a GPU
            assert (match["way"] == "higher") == (difference(comparison, 2200) > 0), comparison
    assert "disagree in sign" not in text  # the page's own check of the same
    # every comparison is stated at 1,000 steps, each with its seed-by-seed difference
    assert len(re.findall(r"seed by seed, [+−-]\d\.\d{4} to [+−-]\d\.\d{4}", text)) >= len(STATED)


def trained_steps() -> set[int]:
    """The last step of every committed lab curve: the schedule each run trained for."""
    steps = set()
    for run in PARAMS["lab"]["runs"]:
        for seed in PARAMS["lab"]["seeds"]:
            with (REPO / "plots" / "lab" / run / f"{seed}.csv").open() as f:
                steps.add(int(list(csv.DictReader(f))[-1]["step"]))
    return steps


def test_the_lab_s_runs_are_the_ones_the_gpu_table_measured():
    assert set(PARAMS["lab"]["runs"]) == set(MEASURED)
    assert {run for pair in COMPARISONS.values() for run in pair} == set(MEASURED)


COMPARISON_NAMES = {
    "scale": "The comparison without and with the scale",
    "heads_1": "The comparison of h = 1 with h = 2",
    "heads_4": "The comparison of h = 4 with h = 2",
    "heads_8": "The comparison of h = 8 with h = 2",
    "positions_sinusoidal": "The comparison of sinusoidal positions with learned positions",
    "positions_none": "The comparison of no positions with learned positions",
}


SIGN = (r"The same runs trained for 2200 steps on a GPU (?P<word>agree|disagree) in sign "
        r"\((?P<trained>[+−-]\d\.\d{4}) nats/char there\)")


def test_each_difference_beyond_the_noise_says_whether_the_trained_models_agree_in_sign():
    text = page_text(fixture_page(LAB))
    seen = set()
    for comparison, pattern in STATED.items():
        match = re.search(pattern, text)
        assert match is not None, comparison
        rest = text[match.end():]
        sign = re.match(SIGN, rest[rest.index(". ") + 2:])  # the sentence after the verdict's (". " ends one)
        trained = difference(comparison, 2200)
        if match["tie"]:
            assert sign is None, comparison  # a tie claims no sign
            continue
        ours_higher = match["way"] == "higher"
        assert sign is not None, comparison
        assert sign["word"] == ("agree" if ours_higher == (trained > 0) else "disagree"), comparison
        assert float(sign["trained"].replace("−", "-")) == pytest.approx(trained, abs=1e-4)
        seen.add(sign["word"])
    assert seen == {"agree", "disagree"}  # the fixtures hold both (8 heads is worse here, better after 2,200 steps)
