"""The one function that words an Outcome for the student: a load and a call, Python and R."""

import pytest

from grader.messages import Message
from grader.outcome_messages import describe
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status

LIMITS = Limits()


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
