"""Which run answers which question comes from the runs' model configs, never from their names."""

from pathlib import Path

import pytest

from mha import schema
from mha.lab.page.roles import assign_roles, differences
from mha.schema import model_config

BASE = model_config(schema.load(Path(__file__).resolve().parents[3] / "params.yaml"), vocab_size=40).to_dict()


def model(**settings) -> dict:
    return {**BASE, **settings}


LAB = {
    "reference": model(),
    "heads_1": model(n_head=1),
    "heads_4": model(n_head=4),
    "heads_8": model(n_head=8),
    "no_scale": model(n_head=1, scale_scores=False),
    "no_positions": model(positions="none"),
    "sinusoidal": model(positions="sinusoidal"),
}


def test_the_lab_s_runs_get_their_roles():
    roles = assign_roles(LAB)
    assert roles.reference == "reference"
    assert roles.heads == ("heads_1", "reference", "heads_4", "heads_8")  # fewest heads first
    assert roles.positions == ("reference", "no_positions", "sinusoidal")
    assert (roles.scaled, roles.unscaled) == ("heads_1", "no_scale")


def test_renamed_and_reordered_runs_keep_their_roles():
    renamed = {name: f"run_{i}" for i, name in enumerate(reversed(LAB))}
    roles = assign_roles({renamed[name]: LAB[name] for name in reversed(LAB)})
    assert roles.reference == renamed["reference"]
    assert roles.heads == tuple(renamed[n] for n in ("heads_1", "reference", "heads_4", "heads_8"))
    assert (roles.scaled, roles.unscaled) == (renamed["heads_1"], renamed["no_scale"])
    assert set(roles.positions) == {renamed[n] for n in ("reference", "no_positions", "sinusoidal")}


def test_differences_names_every_setting_that_differs():
    assert differences(LAB["reference"], LAB["no_scale"]) == {"n_head", "scale_scores"}
    assert differences(LAB["reference"], {**LAB["reference"], "extra": 1}) == {"extra"}


def test_a_lab_that_cannot_answer_a_question_is_refused_naming_the_setting():
    without_positions = {k: v for k, v in LAB.items() if k not in ("no_positions", "sinusoidal")}
    with pytest.raises(ValueError, match="only in positions"):
        assign_roles(without_positions)
    without_pair = {k: v for k, v in LAB.items() if k != "no_scale"}
    with pytest.raises(ValueError, match="only in scale_scores"):
        assign_roles(without_pair)


def test_no_single_reference_is_refused():
    with pytest.raises(ValueError, match="cannot tell the reference"):
        assign_roles({"a": model(), "b": model(n_head=1)})  # each is the other's only neighbour
