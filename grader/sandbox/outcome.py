"""What one load or call in the sandbox came to: a value record, shared by the session that makes it and the
judges that read it. Standard library only, and nothing of the grader's: every module may import it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class Status(StrEnum):
    OK = "ok"  # the load finished, or the call answered an array (``Outcome.value``)
    ERROR = "error"  # the student's code raised (``error``, ``error_type``, ``line``, ``stage``)
    TIMEOUT = "timeout"  # past the load's or the call's time, or the submission's
    CRASH = "crash"  # the child's process ended (``exit_code``)
    TOO_BIG = "too_big"  # an answer with more entries than allowed (``error`` holds the count the child gave)
    PROTOCOL = "protocol"  # the child's pipe carried something that is not one of our frames
    NOT_LOADED = "not_loaded"  # a call after a failed load, or after the restarts ran out


@dataclass(frozen=True)
class Outcome:
    """What one load or call came to; ``value`` is a plain float64 array built by the parent."""

    status: Status
    value: np.ndarray | None = None
    dtype: str = ""
    error: str = ""
    error_type: str = ""
    line: int | None = None
    stage: str = ""  # "call" or "convert" for errors
    exit_code: int | None = None
    functions: tuple[str, ...] = ()
    skipped: tuple[dict, ...] = ()  # top-level statements the load skipped (grader.sandbox.child_config.skipped_fields)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))  # "ok" is Status.OK; an unknown status raises

    @property
    def child_ended(self) -> bool:
        """The child is gone (ended by the session, or never loaded): the next call starts a fresh one, if any."""
        return self.status in (Status.TIMEOUT, Status.CRASH, Status.PROTOCOL, Status.NOT_LOADED)
