"""The allowed imports when a caller names none: the rubric's (``rubric.toml``'s ``imports``)."""

from __future__ import annotations

from grader import rubric

DEFAULT_IMPORTS = rubric.load().imports  # what a submission may import beyond the standard library
