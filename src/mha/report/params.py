"""params.yaml's `report` section as a ReportConfig (the report and lab_report stages read it)."""

from __future__ import annotations

from dataclasses import fields

from mha.params import ParamsError, check_keys, section
from mha.report.page import ReportConfig

REPORT_KEYS = tuple(f.name for f in fields(ReportConfig))


def report_config(params: dict) -> ReportConfig:
    """The `report` section, every key required and checked."""
    values = section(params, "report")
    check_keys(values, "report", REPORT_KEYS)
    k = values["bigram_k"]
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise ParamsError(f"report.bigram_k must be a positive number (add-k smoothing), got {k!r}")
    try:
        return ReportConfig(**values)
    except ValueError as exc:  # the language, named as params.yaml names it
        raise ParamsError(str(exc)) from None
