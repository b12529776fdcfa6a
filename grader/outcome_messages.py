"""What a load or a call in the sandbox came to, as a message key and its values: the one place that switches on
``Status`` (``grader.sandbox.outcome``). Question 1's judge (``checks``), question 2's calls (``module.runner``) and the
load's note (``grade``) all word an outcome through ``describe``."""

from __future__ import annotations

import signal

from grader.messages import Message
from grader.sandbox.limits import MEMORY_KILLED, Limits
from grader.sandbox.outcome import Outcome, Status


def describe(outcome: Outcome, limits: Limits, loading: bool = False, language: str = "python") -> Message | None:
    """What went wrong, or None when the code answered (a call's value is the judge's to read). ``loading``: the
    outcome of loading the submission, worded as such (its own time-out; R's words for an R hand-in,
    ``language``). A raise is worded plainly here; the judges that know more (the case, the notebook's cell)
    word it themselves."""
    r = "_r" if language == "r" else ""  # R's own wording (grader/sandbox/r_runner.R)
    match outcome.status:
        case Status.OK:
            return None
        case Status.TIMEOUT if loading:
            return Message("load.timeout" + r, {"seconds": limits.import_timeout})
        case Status.TIMEOUT:
            return Message("detail.timeout", {"seconds": limits.call_timeout})
        case Status.CRASH:
            code = describe_exit(outcome.exit_code, limits)
            return Message("load.crash" + r, {"code": code}) if loading else Message("detail.crash", {"code": code})
        case Status.PROTOCOL if loading:
            return Message("load.protocol")
        case Status.PROTOCOL | Status.NOT_LOADED:
            return Message(f"detail.{outcome.status}")
        case Status.TOO_BIG:
            return too_big(outcome, limits)
        case Status.ERROR if outcome.error_type == "NotImplementedError":
            return Message("detail.not_implemented")
        case Status.ERROR:
            return Message("detail.raised", {"error": outcome.error, "where": where(outcome.line)})
    raise ValueError(f"an outcome's status must be a Status, got {outcome.status!r}")


def too_big(outcome: Outcome, limits: Limits) -> Message:
    """The answer had more entries than the limit; the count, as the child reported it, is a number to word."""
    entries = int(outcome.error) if outcome.error.isdigit() else outcome.error
    return Message("detail.too_big", {"entries": entries, "limit": limits.max_entries})


def where(line: int | None) -> Message | str:
    return Message("detail.where", {"line": line}) if line else ""


def describe_exit(code: int | None, limits: Limits) -> Message:
    if code is None:
        return Message("code.exit", {"code": "?"})
    if code == MEMORY_KILLED:
        return Message("code.memory")
    if code < 0:
        if -code == signal.SIGXCPU:
            return Message("code.cpu", {"seconds": limits.cpu_seconds})
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return Message("code.signal", {"name": name})
    return Message("code.exit", {"code": code})
