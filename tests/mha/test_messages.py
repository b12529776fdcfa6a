"""The shared message layer: catalogs read from TOML, one lookup that fails loudly, numbers per language."""

import pytest

from mha.messages import (
    Catalog,
    Message,
    check_language,
    default_language,
    integer,
    number,
    percent,
    scientific,
)

SMALL = Catalog("test", {
    "score": {"en": "mean {mean:.1f} of {count:,}, entry {entry}",
              "pt": "média {mean:.1f} de {count:,}, entrada {entry}"},
    "outer": {"en": "because {inner}", "pt": "porque {inner}"},
    "inner": {"en": "{n} went wrong", "pt": "{n} deu errado"},
})


def test_the_lookup_writes_numbers_in_each_languages_notation_and_leaves_strings_alone():
    assert SMALL.text("en", "score", mean=7.25, count=12345, entry="0.5") == "mean 7.2 of 12,345, entry 0.5"
    assert SMALL.text("pt", "score", mean=7.25, count=12345, entry="0.5") == "média 7,2 de 12.345, entrada 0.5"
    assert SMALL.text("en", "inner", n=-3) == "−3 went wrong"  # a true minus sign


def test_a_message_inside_a_message_is_rendered_first():
    message = Message("outer", {"inner": Message("inner", {"n": 2})})
    assert SMALL.render("pt", message) == "porque 2 deu errado"


def test_an_unknown_key_fails_naming_the_key_the_language_and_the_catalog():
    with pytest.raises(KeyError, match=r"'nope' is missing from the 'pt' catalog \(test\)"):
        SMALL.text("pt", "nope")


def test_an_unknown_language_names_the_setting_and_the_choices():
    with pytest.raises(ValueError, match=r"^language is 'fr'; allowed: en, pt$"):
        SMALL.text("fr", "inner", n=1)
    with pytest.raises(ValueError, match=r"^report.language is 'de'; allowed: en, pt$"):
        check_language("de", "report.language")


def test_problems_name_a_missing_language_a_stray_one_and_differing_placeholders():
    broken = Catalog("test", {
        "a": {"en": "only English"},
        "b": {"en": "{x}", "pt": "{y}"},
        "c": {"en": "yes", "pt": "sim", "fr": "oui"},
        "d": {"en": "fine {x}", "pt": "bem {x}"},
    })
    problems = broken.problems()
    assert problems[0] == "message 'a' is missing from the 'pt' catalog"
    assert "'b' has different placeholders" in problems[1] and "'c' has texts in languages ['fr']" in problems[2]
    assert len(problems) == 3


def test_a_catalog_is_read_from_dotted_toml_tables(tmp_path, monkeypatch):
    (tmp_path / "words").mkdir()
    (tmp_path / "words" / "__init__.py").write_text("")
    (tmp_path / "words" / "messages.toml").write_text(
        '[usage.no_file]\nen = "no {path}"\npt = "sem {path}"\n\n'
        '[title]\nen = """a long \\\n    title"""\npt = "título"\n', encoding="utf-8")
    monkeypatch.syspath_prepend(tmp_path)
    catalog = Catalog.load("words")
    assert catalog.entries == {"usage.no_file": {"en": "no {path}", "pt": "sem {path}"},
                               "title": {"en": "a long title", "pt": "título"}}
    (tmp_path / "words" / "messages.toml").write_text('[usage]\nno_file = 3\n')
    with pytest.raises(ValueError, match="usage.no_file is 3"):
        Catalog.load("words")


def test_an_error_carries_its_message_and_reads_in_english_until_worded():
    error = SMALL.error("inner", n=1.5)
    assert isinstance(error, ValueError) and error.message == Message("inner", {"n": 1.5})
    assert str(error) == "1.5 went wrong" and error.text("pt") == "1,5 deu errado"


def test_numbers_use_each_languages_separators():
    assert number("en", 1234.56789) == "1,234.5679" and number("pt", 1234.56789) == "1.234,5679"
    assert number("en", -0.25, 2, signed=True) == "−0.25" and number("en", 0.25, 2, signed=True) == "+0.25"
    assert number("pt", float("nan")) == "nan"
    assert percent("pt", 0.3254, 1) == "32,5%"
    assert scientific("pt", 4.8e-4) == "4,8e−04"
    assert integer("en", 16384000) == "16,384,000" and integer("pt", 16384000) == "16.384.000"


def test_the_default_language_follows_the_locale_variables():
    assert default_language({"LANG": "pt_BR.UTF-8"}) == "pt"
    assert default_language({"LANG": "en_US.UTF-8"}) == "en"
    assert default_language({"LC_ALL": "pt_BR.UTF-8", "LANG": "en_US.UTF-8"}) == "pt"
    assert default_language({"LC_ALL": "", "LC_MESSAGES": "C", "LANG": "pt_BR"}) == "en"
    assert default_language({}) == "en"
