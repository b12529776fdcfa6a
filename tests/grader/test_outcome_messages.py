"""How an Outcome is worded (``grader.outcome_messages``): every branch of ``describe``, ``too_big``, ``where`` and
``describe_exit``, for a load and for a call, in Python's words and in R's. The outcomes are built here, in this
process: no sandbox and no R process start, so that `make mutation` can run these against every mutant."""

import signal

import pytest

from grader.messages import Message
from grader.outcome_messages import describe, describe_exit, too_big, where
from grader.sandbox.limits import MEMORY_KILLED, Limits
from grader.sandbox.outcome import Outcome, Status

LIMITS = Limits()
LANGUAGES = ("python", "r")


@pytest.mark.parametrize("loading", [False, True])
@pytest.mark.parametrize("language", ["python", "r"])
@pytest.mark.parametrize("status", list(Status))
def test_every_status_is_worded_for_a_load_and_for_a_call(status, loading, language):
    said = describe(Outcome(status, error="x"), LIMITS, loading=loading, language=language)
    assert (said is None) == (status is Status.OK)
    if said is not None:
        said.text("en"), said.text("pt")  # a key of the catalog, with every value it asks for


def test_a_load_is_worded_as_a_load_with_its_own_time_and_r_its_own_words():
    timeout = Outcome(Status.TIMEOUT)
    assert describe(timeout, LIMITS) == Message("detail.timeout", {"seconds": LIMITS.call_timeout})
    assert describe(timeout, LIMITS, loading=True) == Message("load.timeout", {"seconds": LIMITS.import_timeout})
    assert describe(timeout, LIMITS, loading=True, language="r").key == "load.timeout_r"
    assert describe(Outcome(Status.PROTOCOL), LIMITS, loading=True) == Message("load.protocol")
    assert describe(Outcome(Status.PROTOCOL), LIMITS) == Message("detail.protocol")


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("loading", [False, True])
def test_an_answer_is_not_worded(loading, language):
    assert describe(Outcome(Status.OK), LIMITS, loading=loading, language=language) is None


def test_a_load_past_its_time_is_worded_with_the_import_timeout_in_each_languages_words():
    timeout = Outcome(Status.TIMEOUT)
    seconds = {"seconds": LIMITS.import_timeout}
    assert describe(timeout, LIMITS, loading=True) == Message("load.timeout", seconds)
    assert describe(timeout, LIMITS, loading=True, language="python") == Message("load.timeout", seconds)
    assert describe(timeout, LIMITS, loading=True, language="r") == Message("load.timeout_r", seconds)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_call_past_its_time_is_worded_with_the_call_timeout_whatever_the_language(language):
    said = describe(Outcome(Status.TIMEOUT), LIMITS, language=language)
    assert said == Message("detail.timeout", {"seconds": LIMITS.call_timeout})


def test_a_crash_while_loading_names_the_process_of_the_hand_ins_language_and_its_exit():
    crash = Outcome(Status.CRASH, exit_code=3)
    code = {"code": Message("code.exit", {"code": 3})}
    assert describe(crash, LIMITS, loading=True) == Message("load.crash", code)
    assert describe(crash, LIMITS, loading=True, language="r") == Message("load.crash_r", code)


@pytest.mark.parametrize("loading", [False, True])
def test_a_crash_past_the_cpu_limit_names_the_limits_seconds_for_a_load_and_for_a_call(loading):
    said = describe(Outcome(Status.CRASH, exit_code=-signal.SIGXCPU), LIMITS, loading=loading)
    assert said.values["code"] == Message("code.cpu", {"seconds": LIMITS.cpu_seconds})


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_crash_during_a_call_is_worded_as_a_call_whatever_the_language(language):
    crash = Outcome(Status.CRASH, exit_code=-signal.SIGKILL)
    said = describe(crash, LIMITS, language=language)
    assert said == Message("detail.crash", {"code": Message("code.signal", {"name": "SIGKILL"})})


def test_r_wording_of_a_load_speaks_of_r_in_both_languages():
    timeout = describe(Outcome(Status.TIMEOUT), LIMITS, loading=True, language="r")
    crash = describe(Outcome(Status.CRASH, exit_code=1), LIMITS, loading=True, language="r")
    assert timeout.text("en").startswith("Loading your file took longer than 30 s")
    assert timeout.text("pt").startswith("Carregar seu arquivo levou mais de 30 s")
    assert "__main__" not in timeout.text("en") + timeout.text("pt")  # Python's advice is not R's
    assert crash.text("en").startswith("The R process stopped while loading your file (exit code 1)")
    assert crash.text("pt").startswith("O processo R parou ao carregar seu arquivo (código de saída 1)")
    python = describe(Outcome(Status.CRASH, exit_code=1), LIMITS, loading=True)
    assert python.text("en").startswith("The Python process stopped while importing your file (exit code 1)")


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_bad_frame_is_worded_as_a_load_or_as_a_call(language):
    protocol = Outcome(Status.PROTOCOL)
    assert describe(protocol, LIMITS, loading=True, language=language) == Message("load.protocol")
    assert describe(protocol, LIMITS, language=language) == Message("detail.protocol")


@pytest.mark.parametrize("loading", [False, True])
def test_a_call_after_a_failed_load_says_it_did_not_run(loading):
    assert describe(Outcome(Status.NOT_LOADED), LIMITS, loading=loading) == Message("detail.not_loaded")


def test_an_answer_too_big_names_its_count_as_a_number_and_the_limit():
    said = describe(Outcome(Status.TOO_BIG, error="2000000"), LIMITS)
    assert said == Message("detail.too_big", {"entries": 2_000_000, "limit": LIMITS.max_entries})
    assert said.text("en") == "returned 2000000 numbers, more than the 1000000 allowed."
    assert said.text("pt") == "retornou 2000000 números, mais do que os 1000000 permitidos."


def test_a_count_that_is_not_a_number_is_quoted_as_the_child_gave_it():
    said = too_big(Outcome(Status.TOO_BIG, error="many"), LIMITS)
    assert said == Message("detail.too_big", {"entries": "many", "limit": LIMITS.max_entries})


def test_a_function_not_written_yet_is_said_to_be_not_implemented():
    outcome = Outcome(Status.ERROR, error="NotImplementedError: softmax", error_type="NotImplementedError", line=4)
    assert describe(outcome, LIMITS) == Message("detail.not_implemented")


@pytest.mark.parametrize("line, at", [(12, Message("detail.where", {"line": 12})), (None, "")])
def test_a_raise_is_worded_with_its_error_and_its_line_where_there_is_one(line, at):
    outcome = Outcome(Status.ERROR, error="ValueError: bad", error_type="ValueError", line=line)
    assert describe(outcome, LIMITS) == Message("detail.raised", {"error": "ValueError: bad", "where": at})


def test_a_raise_names_its_line_in_both_languages():
    said = describe(Outcome(Status.ERROR, error="KeyError: 'x'", error_type="KeyError", line=9), LIMITS)
    assert said.text("en") == "your function raised KeyError: 'x' (line 9 of your file)."
    assert said.text("pt") == "sua função lançou KeyError: 'x' (linha 9 do seu arquivo)."


def test_an_outcome_whose_status_is_not_a_status_is_refused_by_name():
    outcome = Outcome(Status.OK)
    object.__setattr__(outcome, "status", "bogus")  # past Outcome's own check, as a forged record would be
    with pytest.raises(ValueError, match="an outcome's status must be a Status, got 'bogus'"):
        describe(outcome, LIMITS)


def test_where_names_a_line_only_when_there_is_one():
    assert where(1) == Message("detail.where", {"line": 1})
    assert where(None) == ""
    assert where(0) == ""


@pytest.mark.parametrize("code, said", [
    (None, Message("code.exit", {"code": "?"})),
    (0, Message("code.exit", {"code": 0})),
    (1, Message("code.exit", {"code": 1})),
    (MEMORY_KILLED, Message("code.memory")),
    (-signal.SIGXCPU, Message("code.cpu", {"seconds": LIMITS.cpu_seconds})),
    (-signal.SIGKILL, Message("code.signal", {"name": "SIGKILL"})),
    (-signal.SIGHUP, Message("code.signal", {"name": "SIGHUP"})),  # signal 1: the smallest
    (-200, Message("code.signal", {"name": "200"})),  # no such signal: its number
])
def test_how_a_process_end_is_described(code, said):
    assert describe_exit(code, LIMITS) == said


def test_the_cpu_limit_is_worded_with_its_seconds_in_both_languages():
    said = describe_exit(-signal.SIGXCPU, LIMITS)
    assert said.text("en") == f"it used up its CPU-time limit of {LIMITS.cpu_seconds} s"
    assert said.text("pt") == f"ele esgotou o limite de tempo de CPU de {LIMITS.cpu_seconds} s"
