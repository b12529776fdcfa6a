"""One catalog, two languages: nothing missing, nothing left untranslated, every key used exists."""

import re
from pathlib import Path

import pytest

import grader
from grader.cases import FUNCTIONS, GROUPS
from grader.messages import CATALOG, LANGS, text
from grader.mistakes import MISTAKE_IDS
from mha.messages import Catalog

SOURCE = Path(grader.__file__).parent
SAME_IN_BOTH = {"table.total", "usage.bad_value", "case.worked_project"}  # formats with no words to translate


def test_every_message_exists_in_both_languages_with_the_same_placeholders():
    assert CATALOG.problems() == []
    assert len(CATALOG.entries) > 90 and set(LANGS) == {"en", "pt"}


def test_the_check_catches_a_missing_language_and_a_renamed_placeholder():
    broken = {key: dict(texts) for key, texts in CATALOG.entries.items()}
    del broken["table.pass"]["pt"]
    broken["usage.no_file"]["pt"] = "{caminho}: arquivo não encontrado"
    problems = Catalog("broken", broken).problems()
    assert len(problems) == 2 and "'table.pass'" in problems[0] and "'usage.no_file'" in problems[1]


@pytest.mark.parametrize("key", sorted(CATALOG.entries))
def test_every_message_is_translated(key):
    if key not in SAME_IN_BOTH:
        assert CATALOG.entries[key]["en"] != CATALOG.entries[key]["pt"], f"{key} is not translated"


def test_every_key_the_grader_uses_is_in_the_catalog():
    used = set()
    for path in SOURCE.glob("*.py"):
        used |= set(re.findall(
            r"""\btext?\(\s*(?:lang|self\.lang|config\.lang|\w+)?\s*,?\s*["']([a-z_]+\.[a-z_\-]+)["']""",
            path.read_text(),
        ))
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_]+\.[a-z_\-]+)["']""", path.read_text()))
        used |= set(re.findall(r"""\b(?:Message|UsageError|error)\(\s*["']([a-z_]+\.[a-z_\-]+)["']""",
                               path.read_text()))
    used |= (
        {f"test.{g}" for g in GROUPS}
        | {"detail.protocol", "detail.not_loaded", "detail.shape_transposed"}
        | {f"mistake.{m}" for m in MISTAKE_IDS}
        | {f"template.{f}" for f in FUNCTIONS}
    )
    assert len(used) > 70 and {"usage.jobs", "rubric.no_large", "isolation.no_bwrap"} <= used
    assert used <= set(CATALOG.entries), sorted(used - set(CATALOG.entries))


def test_unknown_language_is_refused_by_name():
    with pytest.raises(ValueError, match="language is 'fr'; allowed: en, pt"):
        text("fr", "table.pass")
