"""The typed boundary between the sandbox and the judges: an Outcome's Status, the one function that words it,
and the Launcher protocol both launchers keep. No sandbox is started here."""

import pytest

from grader.messages import Message
from grader.outcome_messages import describe
from grader.sandbox.launch import DirectLauncher, Launcher, WarmServer, Watched
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status

LIMITS = Limits()


def test_a_status_is_a_status_whatever_it_was_made_from():
    assert Outcome("timeout").status is Status.TIMEOUT
    with pytest.raises(ValueError, match="bogus"):
        Outcome("bogus")


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


def test_the_child_has_ended_after_a_timeout_a_crash_a_bad_frame_or_no_load_only():
    ended = {s for s in Status if Outcome(s).child_ended}
    assert ended == {Status.TIMEOUT, Status.CRASH, Status.PROTOCOL, Status.NOT_LOADED}


@pytest.mark.parametrize("make", [lambda: DirectLauncher(), lambda: WarmServer(packages=()),
                                  lambda: Watched(DirectLauncher())], ids=["direct", "warm_server", "watched"])
def test_every_launcher_has_all_the_session_asks_of_it(make):
    launcher = make()  # nothing starts until the first spawn
    try:
        asked = set(Launcher.__annotations__) | {n for n in vars(Launcher) if not n.startswith("_")}
        assert asked == {"site_dirs", "placement", "spawn", "alive", "close"}
        missing = {name for name in asked if not hasattr(launcher, name)}
        assert not missing, missing
        assert isinstance(launcher.site_dirs, list) and launcher.alive() in (True, False)
    finally:
        launcher.close()
