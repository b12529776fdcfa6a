"""The grader's words reach the student and the instructor in the language they chose: --lang, else LANG."""

from pathlib import Path

import pytest

from grader import batch, cli
from grader.messages import Message
from grader.sandbox import isolation

from .conftest import SUBMISSIONS

CORRECT = str(SUBMISSIONS / "correct_numpy.py")


@pytest.fixture
def bad_rubric(tmp_path) -> str:
    path = tmp_path / "rubric.toml"
    path.write_text("[softmax]\nhidden = -1\n")
    return str(path)


@pytest.mark.parametrize(("argv", "portuguese"), [
    (["--seed", "-3", CORRECT], "--seed deve ser um inteiro não negativo, mas veio −3"),
    (["--timeout", "700.5", CORRECT], "--timeout deve ser um número de segundos em (0, 600], mas veio 700,5"),
    (["--bogus"], "(veja python -m grader --help)"),
    (["--rubric", "RUBRIC", CORRECT], "rubrica RUBRIC: [softmax] hidden = -1 deve ser um número >= 0"),
    (["bundle", "--out", "x.zip", "--rubric", "RUBRIC"], "deve ser um número >= 0"),
    ([str(Path(CORRECT).parent), "--csv", "g.csv", "--jobs", "0", "--seed", "1"],
     "--jobs deve ser um inteiro positivo"),
    (["--isolation", "namespaces", CORRECT], "--isolation namespaces não pode rodar aqui: o bubblewrap não está"),
])
def test_lang_words_every_usage_error(argv, portuguese, bad_rubric, capsys, monkeypatch):
    monkeypatch.setattr(isolation, "namespaces_problem", lambda: Message("isolation.no_bwrap"))
    argv = [bad_rubric if arg == "RUBRIC" else arg for arg in argv]
    if argv[0] != "bundle" and "--isolation" not in argv:
        argv += ["--isolation", "trusted"]  # asked for, so no note on weaker isolation precedes the error
    portuguese = portuguese.replace("RUBRIC", bad_rubric)
    for given in (["--lang", "pt"], ["--lang=pt"]):
        assert cli.main([*argv, *given]) == 2
        err = capsys.readouterr().err
        assert err.startswith("grader: ") and portuguese in err and err.count("\n") == 1, err
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    assert cli.main(argv) == 2 and portuguese in capsys.readouterr().err  # no --lang: LANG decides
    assert cli.main([*argv, "--lang", "en"]) == 2 and portuguese not in capsys.readouterr().err


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
def test_the_note_on_weaker_isolation_is_worded_whole_in_the_language(capsys, monkeypatch):
    monkeypatch.setattr(isolation, "namespaces_problem", lambda: Message("isolation.no_bwrap"))
    monkeypatch.setattr(isolation, "uid_problem", lambda: Message("isolation.uid_needs_root"))
    assert cli.main(["--lang", "pt", CORRECT]) == 0
    assert capsys.readouterr().err == (
        "Aviso: seu código rodou no modo trusted, sem namespaces do Linux (o bubblewrap não está instalado "
        "(Debian/Ubuntu: apt-get install bubblewrap)); as notas são as mesmas, o isolamento é mais fraco.\n")


def test_the_batch_summary_and_the_table_write_numbers_in_the_language():
    line = batch.summary([], 7.5, 12.84, "pt").splitlines()[0]
    assert line == "0 submissões corrigidas em 12,8 s; nota média 0,0 / 7,5."
    assert batch.summary([], 7.5, 12.84, "en").startswith("Graded 0 submissions in 12.8 s; mean score 0.0 / 7.5.")
