"""Where a run happens: the versions of the packages that shape its numbers, and the CPU.

The training stage records these in its run record (models/<stage>.json); the report shows them from
there, so they describe the machine that trained, not the one that rendered the page.
"""

from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

import mha


def package_version(name: str) -> str | None:
    """The installed distribution's version, or None when it is not installed (e.g. dvc outside the venv)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
            "mha": mha.__version__, "dvc": package_version("dvc")}


def cpu_model() -> str | None:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform reports, else None."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None
