"""The report's words: numbers written in the page's language, keys and values checked where a sentence is made."""

import pytest

from mha.report.heads import HeadStats
from mha.report.messages import CATALOG, Messages
from mha.schema import POSITIONS, ReportConfig


def test_head_kinds_and_kinds_of_positions_all_have_their_words():
    kinds = {HeadStats(1, 1, 0.0, p, s, 1.0, 0.0).kind for p, s in ((0.9, 0.0), (0.0, 0.9), (0.1, 0.1))}
    needed = {f"reading_{k}" for k in kinds} | {f"lab_positions_kind_{kind}" for kind in POSITIONS}
    assert needed <= CATALOG.entries.keys()


def test_the_report_writes_numbers_in_its_language():
    assert Messages("en").number(1234.56789) == "1,234.5679"
    assert Messages("pt").number(1234.56789) == "1.234,5679"
    assert Messages("pt").percent(0.3254, 1) == "32,5%"
    assert Messages("pt").exact(0.001) == "0,001" and Messages("en").exact(0.001) == "0.001"  # a setting, unrounded


def test_a_missing_key_raises_naming_the_key_and_the_catalog():
    with pytest.raises(KeyError, match="'no_such_key' is not in the catalog mha.report/messages.toml"):
        Messages("pt")("no_such_key")


def test_the_report_refuses_a_language_it_has_no_words_for_naming_the_setting():
    with pytest.raises(ValueError, match=r"^report.language is 'fr'; allowed: en, pt$"):
        ReportConfig(language="fr", bigram_k=0.1)
