"""A gradebook row's LMS identity, as columns: which LMS, the student's id there, their name as the LMS spells it.

The one mapping from an entry to these columns: the gradebook (``grader.batch``) writes them and the exports
(``grader.lms.exports.from_rows``) read them, to address each student in the LMS's own terms ("Participant
1874501" in Moodle, the user id in Canvas).
"""

from __future__ import annotations

LMS_COLUMNS = ["lms", "lms_id", "lms_name", "lookalike"]
PLAIN = "plain"  # the lms column of an entry no LMS named (its own name is the student's)


def lms_columns(entry) -> dict[str, str]:
    """The columns of a ``grader.intake.finding.Entry``; a row without one is a plain entry's, no id, no name."""
    if entry is None:
        return {"lms": PLAIN, "lms_id": "", "lms_name": "", "lookalike": ""}
    return {"lms": entry.layout, "lms_id": entry.lms_id, "lms_name": entry.display, "lookalike": entry.lookalike}
