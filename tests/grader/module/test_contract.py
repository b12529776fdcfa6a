"""The contract: which question's tests a hand-in is graded on, a closed vocabulary."""

from __future__ import annotations

import pytest

from grader import rubric
from grader.module.contract import CONTRACTS, Contract
from mha.messages import MessageError


def test_a_rubric_may_name_every_contract_but_both_which_is_told_alone():
    assert CONTRACTS == ("auto", "functions", "module") and Contract.BOTH.value not in CONTRACTS
    assert all(type(c) is str for c in CONTRACTS)  # plain values: a refusal lists them as the rubric writes them


@pytest.mark.parametrize("value", CONTRACTS)
def test_a_rubrics_contract_is_read_as_its_member(tmp_path, value):
    path = tmp_path / "r.toml"
    path.write_text(f'[options]\ncontract = "{value}"\n', encoding="utf-8")
    assert rubric.load(path).contract is Contract(value)


def test_an_unknown_contract_is_refused_listing_the_allowed_ones(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text('[options]\ncontract = "both"\n', encoding="utf-8")
    with pytest.raises(MessageError) as caught:
        rubric.load(path)
    assert "allowed: 'auto', 'functions', 'module'" in caught.value.text("en")
