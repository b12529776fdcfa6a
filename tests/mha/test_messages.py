"""The message layer: every catalog complete in both languages, a message checked when it is made, numbers
written per language."""

import re

import pytest

from grader.messages import CATALOG as GRADER
from grader.messages import Message as GRADER_MESSAGE
from mha.messages import (
    Catalog,
    Message,
    MessageError,
    check_language,
    default_language,
    integer,
    number,
    percent,
    scientific,
)
from mha.report.messages import CATALOG as REPORT
from mha.report.messages import Messages

CATALOGS = {"grader": GRADER, "report": REPORT}


@pytest.mark.parametrize("catalog", CATALOGS.values(), ids=CATALOGS.keys())
def test_every_message_has_a_text_in_each_language_with_the_same_placeholders(catalog):
    assert catalog.entries and catalog.problems() == []


SMALL = Catalog("small", {
    "score": {"en": "mean {mean:.1f} of {count:,}, entry {entry}",
              "pt": "média {mean:.1f} de {count:,}, entrada {entry}"},
    "outer": {"en": "because {inner}", "pt": "porque {inner}"},
    "inner": {"en": "{n} went wrong", "pt": "{n} deu errado"},
})


class Small(Message):
    catalog = SMALL


def test_a_message_writes_numbers_in_each_languages_notation_and_leaves_strings_alone():
    score = Small("score", {"mean": 7.25, "count": 12345, "entry": "0.5"})
    assert score.text("en") == str(score) == "mean 7.2 of 12,345, entry 0.5"
    assert score.text("pt") == "média 7,2 de 12.345, entrada 0.5"
    assert Small("inner", {"n": -3}).text("en") == "−3 went wrong"  # a true minus sign


def test_a_message_inside_a_message_is_worded_first():
    assert Small("outer", {"inner": Small("inner", {"n": 2})}).text("pt") == "porque 2 deu errado"


def test_an_unknown_key_raises_where_the_message_is_made_naming_it_and_the_catalog():
    with pytest.raises(KeyError, match=r"'nope' is not in the catalog small"):
        Small("nope")


@pytest.mark.parametrize(("values", "missing", "extra"), [
    ({}, "['n']", "[]"),
    ({"n": 1, "m": 2}, "[]", "['m']"),
    ({"m": 2}, "['n']", "['m']"),
])
def test_a_missing_or_extra_value_raises_where_the_message_is_made(values, missing, extra):
    expected = f"'inner' of small needs the values ['n']; missing {missing}, not used {extra}"
    with pytest.raises(TypeError, match=re.escape(expected)):
        Small("inner", values)


@pytest.mark.parametrize(("make", "key"), [
    (lambda: GRADER_MESSAGE("detail.missing", {}), "detail.missing"),
    (lambda: GRADER_MESSAGE("detail.missnig", {"function": "softmax"}), "detail.missnig"),
    (lambda: Messages("pt")("heatmap_title", camada=1, head=0), "heatmap_title"),
])
def test_each_products_catalog_checks_its_own_keys_when_made(make, key):
    with pytest.raises((KeyError, TypeError), match=key):
        make()


def test_an_error_carries_its_message_and_reads_in_english_until_worded():
    error = Small.error("inner", n=1.5)
    assert isinstance(error, (MessageError, ValueError)) and error.message == Small("inner", {"n": 1.5})
    assert str(error) == "1.5 went wrong" and error.text("pt") == "1,5 deu errado"


def test_problems_name_a_missing_language_a_stray_one_and_differing_placeholders():
    broken = Catalog("broken", {
        "a": {"en": "only English"},
        "b": {"en": "{x}", "pt": "{y}"},
        "c": {"en": "yes", "pt": "sim", "fr": "oui"},
        "d": {"en": "fine {x}", "pt": "bem {x}"},
        "e": {"en": "blank", "pt": "  "},
    })
    problems = broken.problems()
    assert problems[0] == "message 'a' has no 'pt' text"
    assert "'b' has different placeholders" in problems[1] and "'c' has texts in languages ['fr']" in problems[2]
    assert problems[3] == "message 'e' has no 'pt' text" and len(problems) == 4


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


def test_an_unknown_language_names_the_setting_and_the_choices():
    with pytest.raises(ValueError, match=r"^language is 'fr'; allowed: en, pt$"):
        check_language("fr")
    with pytest.raises(ValueError, match=r"^report.language is 'de'; allowed: en, pt$"):
        check_language("de", "report.language")


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


@pytest.mark.parametrize(("text", "expected"), [
    (lambda n: GRADER_MESSAGE("batch.summary", {"count": n, "seconds": 2.5, "mean": 1.0,
                                                "max_score": 7.5}).text("pt"),
     ["1 submissão corrigida em 2,5 s; nota média 1,0 / 7,5.",
      "2 submissões corrigidas em 2,5 s; nota média 1,0 / 7,5."]),
    (lambda n: GRADER_MESSAGE("fail.count", {"failed": n, "count": 3}).text("pt"),
     ["(1 de 3 casos falhou.)", "(2 de 3 casos falharam.)"]),
    (lambda n: Messages("pt")("lab_heads_best", n_head=n, d_k=64 // n, loss=1.5, sd=0.01, seeds=3),
     ["A menor perda de validação média veio com h = 1 cabeça (d_k = 64): 1,5000 ± 0,0100 nats/caractere em 3 "
      "sementes.", "A menor perda de validação média veio com h = 2 cabeças (d_k = 32): 1,5000 ± 0,0100 "
      "nats/caractere em 3 sementes."]),
    (lambda n: GRADER_MESSAGE("intake.helpers", {"count": n, "modules": ", ".join(["a.py", "b.py"][:n])}).text("pt"),
     ["Seu módulo auxiliar a.py foi carregado junto com o seu arquivo.",
      "Seus módulos auxiliares a.py, b.py foram carregados junto com o seu arquivo."]),
    (lambda n: GRADER_MESSAGE("note.training", {"first": 4.1875 / n, "last": 2.5, "steps": 40}).text("pt"),
     ["Perda fora do treino 4,188 → 2,500 em 40 passos.", "Perda fora do treino 2,094 → 2,500 em 40 passos."]),
])
def test_portuguese_agrees_with_the_count_and_writes_decimal_commas(text, expected):
    assert [text(1), text(2)] == expected
