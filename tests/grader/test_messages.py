"""One catalog, two languages: nothing missing, nothing left untranslated, every key used exists."""

import re
import string
from pathlib import Path

import pytest

import grader
from grader.cases import FUNCTIONS, GROUPS
from grader.messages import CATALOG, LANGS, default_lang, text
from grader.mistakes import MISTAKE_IDS

SOURCE = Path(grader.__file__).parent
SAME_IN_BOTH = {"table.total", "usage.bad_value", "case.worked_project"}  # formats with no words to translate


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("key", sorted(CATALOG))
def test_every_message_exists_in_both_languages_with_the_same_placeholders(key):
    entry = CATALOG[key]
    assert set(entry) == set(LANGS), key
    assert all(entry[lang].strip() for lang in LANGS), key
    assert fields(entry["en"]) == fields(entry["pt"]), key
    if key not in SAME_IN_BOTH:
        assert entry["en"] != entry["pt"], f"{key} is not translated"


def test_every_key_the_grader_uses_is_in_the_catalog():
    used = set()
    for path in SOURCE.glob("*.py"):
        used |= set(re.findall(
            r"""\btext?\(\s*(?:lang|self\.lang|config\.lang|\w+)?\s*,?\s*["']([a-z_]+\.[a-z_\-]+)["']""",
            path.read_text(),
        ))
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_]+\.[a-z_\-]+)["']""", path.read_text()))
        used |= set(re.findall(r"""\bMessage\(\s*["']([a-z_]+\.[a-z_\-]+)["']""", path.read_text()))
    used |= (
        {f"test.{g}" for g in GROUPS}
        | {"detail.protocol", "detail.not_loaded", "detail.shape_transposed"}
        | {f"mistake.{m}" for m in MISTAKE_IDS}
        | {f"template.{f}" for f in FUNCTIONS}
    )
    assert len(used) > 40
    assert used <= set(CATALOG), sorted(used - set(CATALOG))


def test_unknown_language_is_refused_by_name():
    with pytest.raises(ValueError, match="lang must be one of en, pt, got 'fr'"):
        text("fr", "table.pass")


def test_default_language_follows_LANG():
    assert default_lang({"LANG": "pt_BR.UTF-8"}) == "pt"
    assert default_lang({"LANG": "en_US.UTF-8"}) == "en"
    assert default_lang({"LC_ALL": "pt_BR.UTF-8", "LANG": "en_US.UTF-8"}) == "pt"
    assert default_lang({}) == "en"
