"""The report's message catalog: complete in both languages, and the number formats of each."""

import copy
import re
from pathlib import Path

import pytest

from mha.report.heads import HeadStats
from mha.report.messages import CATALOG, LANGUAGES, Messages, catalog_problems

REPO = Path(__file__).resolve().parents[3]
SOURCES = sorted((REPO / "src" / "mha" / "report").glob("*.py")) + [REPO / "pipeline" / "templates" / "report.html.j2"]


def used_keys() -> set[str]:
    """Every catalog key the code and the template name literally: t("key" ...), "key" if ... else "key"."""
    keys = set()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        keys |= set(re.findall(r"""\bt\(\s*["']([a-z][A-Za-z0-9_]*)["']""", text))
        for pair in re.findall(r"""["']([a-z][A-Za-z0-9_]*)["'] if [^\n]+? else ["']([a-z][A-Za-z0-9_]*)["']""", text):
            keys |= {k for k in pair if "_" in k}
    # Keys built at run time: the head readings, one per kind a head can be read as.
    keys |= {f"reading_{kind}" for kind in ("previous", "self", "spread")}
    return keys


def test_the_catalog_has_every_key_in_both_languages_with_the_same_placeholders():
    assert catalog_problems() == []
    assert set(CATALOG) == set(LANGUAGES) == {"en", "pt"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_key_missing_from_either_language_is_reported(language):
    broken = copy.deepcopy(CATALOG)
    del broken[language]["sec_answer"]
    assert catalog_problems(broken) == [f"message 'sec_answer' is missing from the {language!r} catalog"]


def test_a_placeholder_renamed_in_one_language_is_reported():
    broken = copy.deepcopy(CATALOG)
    broken["pt"]["heatmap_title"] = "Camada {camada}, cabeça {head}"
    assert len(catalog_problems(broken)) == 1 and "heatmap_title" in catalog_problems(broken)[0]


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_key_the_code_uses_exists_in_each_language(language):
    missing = sorted(used_keys() - CATALOG[language].keys())
    assert missing == [], f"used by the code but missing from {language!r}: {missing}"
    assert "check_pass" in used_keys() and "q3_late_flat" in used_keys()  # the scan sees conditional keys


def test_every_catalog_key_is_used_somewhere():
    assert sorted(CATALOG["en"].keys() - used_keys()) == []


def test_head_kinds_all_have_a_reading():
    kinds = {HeadStats(1, 1, 0.0, p, s, 1.0, 0.0).kind for p, s in ((0.9, 0.0), (0.0, 0.9), (0.1, 0.1))}
    assert {f"reading_{k}" for k in kinds} <= CATALOG["en"].keys() & CATALOG["pt"].keys()


def test_portuguese_is_not_a_copy_of_english():
    same = [k for k in CATALOG["en"] if CATALOG["en"][k] == CATALOG["pt"][k] and len(CATALOG["en"][k]) > 12]
    assert same == []


def test_numbers_use_each_languages_separators():
    en, pt = Messages("en"), Messages("pt")
    assert en.number(1234.56789) == "1,234.5679"
    assert pt.number(1234.56789) == "1.234,5679"
    assert en.number(-0.25, 2, signed=True) == "−0.25" and en.number(0.25, 2, signed=True) == "+0.25"
    assert pt.percent(0.3254, 1) == "32,5%"
    assert pt.scientific(4.8e-4) == "4,8e−04"
    assert en.integer(16384000) == "16,384,000"


def test_an_unknown_language_names_the_value_and_the_choices():
    with pytest.raises(ValueError, match=r"report.language is 'fr'; allowed: en, pt"):
        Messages("fr")


def test_a_missing_key_raises_naming_the_key_and_language():
    with pytest.raises(KeyError, match="no_such_key.*'pt'"):
        Messages("pt")("no_such_key")

