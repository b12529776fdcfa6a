"""What became of a hand-in, as the gradebook's status column says it: a closed vocabulary, written once.

A leaf (it imports nothing of the grader), read by the grader (``grade``), the batch, the gradebook's record, the
feedback page and the class page. A ``StrEnum``: each member is its value as a string, so the CSV, the JSON and
any f-string hold the value byte for byte ("import failed"), and a status read back from a file compares equal to
its member.
"""

from __future__ import annotations

from enum import StrEnum


class GradeStatus(StrEnum):
    GRADED = "graded"  # every test ran and was judged
    REFUSED = "refused"  # the intake would not read the hand-in (the reason says why): every test failed
    IMPORT_FAILED = "import failed"  # the hand-in was read but did not load in the sandbox
    GRADER_ERROR = "grader error"  # the grader itself failed on this hand-in: not the student's doing


NOT_GRADED = tuple(s for s in GradeStatus if s is not GradeStatus.GRADED)  # in the order the class page lists them
