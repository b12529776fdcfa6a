"""A gradebook row's LMS identity, as columns: which LMS, the student's id there, their name as the LMS spells it.

The exports (``grader.lms.exports``) read these columns back to address each student in the LMS's own terms
("Participant 1874501" in Moodle, the user id in Canvas).
"""

from __future__ import annotations

LMS_COLUMNS = ["lms", "lms_id", "lms_name", "lookalike"]


def lms_columns(entry) -> dict[str, str]:
    """The columns of a ``grader.intake.finding.Entry`` (empty strings for a row without one)."""
    if entry is None:
        return dict.fromkeys(LMS_COLUMNS, "")
    return {"lms": entry.layout, "lms_id": entry.lms_id, "lms_name": entry.display, "lookalike": entry.lookalike}
