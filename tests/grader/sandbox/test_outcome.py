"""The typed boundary between the sandbox and the judges: an Outcome's Status (its wording: test_outcome_messages.py,
the launchers' protocol: test_launch.py). No sandbox is started here."""

import pytest

from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status

LIMITS = Limits()


def test_a_status_is_a_status_whatever_it_was_made_from():
    assert Outcome("timeout").status is Status.TIMEOUT
    with pytest.raises(ValueError, match="bogus"):
        Outcome("bogus")


def test_the_child_has_ended_after_a_timeout_a_crash_a_bad_frame_or_no_load_only():
    ended = {s for s in Status if Outcome(s).child_ended}
    assert ended == {Status.TIMEOUT, Status.CRASH, Status.PROTOCOL, Status.NOT_LOADED}
