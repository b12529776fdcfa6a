"""The report's message catalog: complete in both languages, every key it uses present, numbers per language."""

import re
from pathlib import Path

import pytest

from mha.messages import Catalog
from mha.model import POSITIONS
from mha.report.heads import HeadStats
from mha.report.messages import CATALOG, LANGUAGES, Messages

REPO = Path(__file__).resolve().parents[3]
SOURCES = (sorted((REPO / "src" / "mha" / "report").glob("*.py"))
           + sorted((REPO / "src" / "mha" / "lab" / "page").glob("*.py"))  # the lab page shares the catalog
           + [REPO / "pipeline" / "templates" / name for name in ("report.html.j2", "lab.html.j2")])


def used_keys() -> set[str]:
    """Every catalog key the code and the template name literally: t("key" ...), "key" if ... else "key"."""
    keys = set()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        keys |= set(re.findall(r"""\bt\(\s*["']([a-z][A-Za-z0-9_]*)["']""", text))
        keys |= set(re.findall(r"""\bMessage\(\s*["']([a-z][A-Za-z0-9_]*)["']""", text))  # judged sentences
        for pair in re.findall(r"""["']([a-z][A-Za-z0-9_]*)["'] if [^\n]+? else ["']([a-z][A-Za-z0-9_]*)["']""", text):
            keys |= {k for k in pair if "_" in k}
    # Keys built at run time: the head readings, one per kind a head can be read as.
    keys |= {f"reading_{kind}" for kind in ("previous", "self", "spread")}
    # and the lab's kinds of positions (mha.model.POSITIONS).
    keys |= {f"lab_positions_kind_{kind}" for kind in POSITIONS}
    return keys


def test_the_catalog_has_every_key_in_both_languages_with_the_same_placeholders():
    assert CATALOG.problems() == []
    assert len(CATALOG.entries) > 100 and LANGUAGES == ("en", "pt")


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_key_missing_from_either_language_is_reported(language):
    broken = {key: dict(texts) for key, texts in CATALOG.entries.items()}
    del broken["sec_answer"][language]
    assert Catalog("broken", broken).problems() == [f"message 'sec_answer' is missing from the {language!r} catalog"]


def test_a_placeholder_renamed_in_one_language_is_reported():
    broken = {key: dict(texts) for key, texts in CATALOG.entries.items()}
    broken["heatmap_title"]["pt"] = "Camada {camada}, cabeça {head}"
    problems = Catalog("broken", broken).problems()
    assert len(problems) == 1 and "heatmap_title" in problems[0]


def test_every_key_the_code_uses_exists():
    missing = sorted(used_keys() - CATALOG.entries.keys())
    assert missing == [], f"used by the code but missing from the catalog: {missing}"
    assert "check_pass" in used_keys() and "q3_late_flat" in used_keys()  # the scan sees conditional keys


def test_every_catalog_key_is_used_somewhere():
    assert sorted(CATALOG.entries.keys() - used_keys()) == []


def test_head_kinds_all_have_a_reading():
    kinds = {HeadStats(1, 1, 0.0, p, s, 1.0, 0.0).kind for p, s in ((0.9, 0.0), (0.0, 0.9), (0.1, 0.1))}
    assert {f"reading_{k}" for k in kinds} <= CATALOG.entries.keys()


def test_portuguese_is_not_a_copy_of_english():
    same = [k for k, texts in CATALOG.entries.items() if texts["en"] == texts["pt"] and len(texts["en"]) > 12]
    assert same == []


def test_the_report_writes_numbers_in_its_language():
    assert Messages("en").number(1234.56789) == "1,234.5679"
    assert Messages("pt").number(1234.56789) == "1.234,5679"
    assert Messages("pt").percent(0.3254, 1) == "32,5%"


def test_an_unknown_language_names_the_value_and_the_choices():
    with pytest.raises(ValueError, match=r"report.language is 'fr'; allowed: en, pt"):
        Messages("fr")


def test_a_missing_key_raises_naming_the_key_and_language():
    with pytest.raises(KeyError, match="no_such_key.*'pt'"):
        Messages("pt")("no_such_key")

