"""What the stage scripts tell their user: a complete catalog, every key they use in it, worded in LANG's language."""

import re
from pathlib import Path

import pytest

from mha.stage_messages import CATALOG, tell

REPO = Path(__file__).resolve().parents[2]
# The stage scripts, and the library modules whose errors they print (CATALOG.error in mha.report.params, ...).
STAGE_SCRIPTS = sorted((REPO / "pipeline").glob("*.py")) + sorted((REPO / "src" / "mha").rglob("*.py"))


def used_keys() -> set[str]:
    """Every key a stage script names: tell("stage", "key" ...), CATALOG.error("key" ...), Message("key" ...) or
    wording("key" ...)."""
    keys = set()
    for path in STAGE_SCRIPTS:
        source = path.read_text(encoding="utf-8")
        keys |= set(re.findall(r"""\btell\(\s*[\w"]+,\s*"([\w.]+)\"""", source))  # the stage, named or passed
        keys |= set(re.findall(r"""\bCATALOG\.error\(\s*"([\w.]+)\"""", source))
        if path.parent.name == "pipeline":  # in the library, Messages belong to the errors' or the report's catalog
            keys |= set(re.findall(r"""\bMessage\(\s*"([\w.]+)\"""", source))
        keys |= set(re.findall(r"""\bwording\(\s*"([\w.]+)\"""", source))
    return keys


def test_the_catalog_is_complete_in_both_languages():
    assert CATALOG.problems() == []
    assert all(texts["en"] != texts["pt"] for texts in CATALOG.entries.values())


def test_every_key_the_stages_use_is_in_the_catalog_and_every_entry_is_used():
    assert {"report.nothing_written", "verify_example.mismatch", "report.bad_add_k"} <= used_keys()
    assert used_keys() == set(CATALOG.entries)


@pytest.mark.parametrize(("lang", "expected"), [
    ("en_US.UTF-8", "report: nothing written; out.html is unchanged\nreport: report.bigram_k is -1; it must"),
    ("pt_BR.UTF-8", "report: nada foi escrito; out.html continua como estava\nreport: report.bigram_k é -1; deve"),
])
def test_a_stage_words_its_lines_and_its_errors_in_the_language_of_LANG(lang, expected, capsys, monkeypatch):
    monkeypatch.setenv("LANG", lang)
    for variable in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    tell("report", "report.nothing_written", path="out.html")
    tell("report", CATALOG.error("report.bad_add_k", value="-1"))
    tell("report", ValueError("an error from deeper down"))
    err = capsys.readouterr().err
    assert err.startswith(expected) and err.endswith("\nreport: an error from deeper down\n")
