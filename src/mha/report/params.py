"""params.yaml as the report stages read it: the file, and the `report` section as a ReportConfig.

Each problem is a stage-catalog error (mha.stage_messages), which the stage prints as one line.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import yaml

from mha.report.page import ReportConfig
from mha.stage_messages import CATALOG

REPORT_KEYS = tuple(f.name for f in fields(ReportConfig))


def read_params(path: Path) -> dict:
    try:
        params = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise CATALOG.error("report.params_missing", path=path) from None
    except yaml.YAMLError as exc:
        raise CATALOG.error("report.params_not_yaml", path=path, error=str(exc).splitlines()[0]) from None
    return params


def report_config(params: dict) -> ReportConfig:
    """The `report` section, every key checked."""
    section = params.get("report") or {}
    unknown = sorted(set(section) - set(REPORT_KEYS))
    if unknown:
        raise CATALOG.error("report.unknown_keys", unknown=unknown, allowed=sorted(REPORT_KEYS))
    config = ReportConfig(**section)
    k = config.bigram_k
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise CATALOG.error("report.bad_add_k", value=repr(k))
    return config
