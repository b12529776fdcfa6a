"""How a batch ran, written beside its gradebook (``grades.csv`` -> ``grades.run.json``) and read back by the
class page: the date, the secret's fingerprint (never the secret), the rubric, the versions, where the hand-ins
and the results are, and the file name each student's results carry.

The writer and its validating reader are side by side; the batch writes it, the class page reads it. It lives
here, not in the page's package, so that the batch (the engine) imports nothing of the page.
"""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import mha
from mha.files import write_json

SUFFIX = ".run.json"
FINGERPRINT_LABEL = b"grader secret fingerprint\x00"  # keeps this hash apart from any other use of the secret
PACKAGES = ("numpy", "torch")


def path_for(csv_path: Path) -> Path:
    """The run record of a gradebook: ``grades.csv`` -> ``grades.run.json``, beside it."""
    return csv_path.with_name(csv_path.stem + SUFFIX)


def fingerprint(secret: bytes) -> str:
    """16 hex digits that tell two secrets apart and say nothing about either (a truncated SHA-256)."""
    return hashlib.sha256(FINGERPRINT_LABEL + secret).hexdigest()[:16]


def versions() -> dict[str, str]:
    found = {"python": platform.python_version(), "mha": mha.__version__}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "?"
    return found


@dataclass(frozen=True)
class RunRecord:
    date: str  # ISO 8601, UTC, when the batch finished
    secret_fingerprint: str  # "" when the public seed was used
    seed: int | None  # the public seed, when no secret was used
    rubric: str  # where the points came from ("default" or the --rubric path)
    points: dict[str, float]  # "function/group" -> points
    versions: dict[str, str]
    lang: str
    submissions: str  # the batch folder, or the LMS's zip as downloaded (absolute: the page may be made from elsewhere)
    results_dir: str
    stems: dict[str, str]  # student -> the file stem of their results JSON (and feedback page)
    seconds: float  # the batch's wall time
    feedback_dir: str = ""  # where --feedback-dir put the per-student pages (absolute); "" when none were written

    def to_dict(self) -> dict:
        return asdict(self)


def make(config, directory: Path, results_dir: Path, stems: dict[str, str], seconds: float,
         feedback_dir: Path | None = None) -> RunRecord:
    """The record of a batch graded with ``config`` (a grader.grade.GradeConfig); ``directory``: where the
    hand-ins are for whoever reads them again (the zip as downloaded, never the grader's unpacked copy)."""
    points = {f"{function}/{group}": value for (function, group), value in sorted(config.rubric.points.items())}
    return RunRecord(date=datetime.now(UTC).isoformat(timespec="seconds"),
                     secret_fingerprint=fingerprint(config.secret) if config.secret is not None else "",
                     seed=None if config.secret is not None else config.seed, rubric=config.rubric.source,
                     points=points, versions=versions(), lang=config.lang, submissions=str(directory.resolve()),
                     results_dir=str(results_dir.resolve()), stems=dict(stems), seconds=round(seconds, 3),
                     feedback_dir=str(feedback_dir.resolve()) if feedback_dir is not None else "")


def write(csv_path: Path, record: RunRecord) -> Path:
    return write_json(path_for(csv_path), record.to_dict())


def read(csv_path: Path) -> RunRecord | None:
    """The run record beside ``csv_path``, or None when there is none (a gradebook from elsewhere); a
    ValueError naming the file when it is there but not a run record."""
    path = path_for(csv_path)
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a readable run record ({exc}); run the batch again to rewrite it") from None
    names = {f.name for f in fields(RunRecord)}
    if isinstance(raw, dict):
        raw.setdefault("feedback_dir", "")  # a record written before the batch named its feedback pages
    if not isinstance(raw, dict) or set(raw) != names:
        got = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise ValueError(f"{path} is not a run record: its keys are {got}, expected {sorted(names)}")
    return RunRecord(**raw)
