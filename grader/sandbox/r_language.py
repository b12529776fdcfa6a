"""Where R is, and what the sandbox's child needs to start it: the grader's side of ``r_runner.R``.

R is found once per grading run by asking the ``R`` on the PATH (trusted code only: ``R --vanilla -e``)
for its home, its program and the library holding jsonlite, the one package the runner uses. The child
(``inside/serving.py``'s ``_become_r``) then starts that program with exactly this environment, nothing of the
grader's or the student's: no ``R_ENVIRON*``, ``R_PROFILE*`` or ``R_LIBS`` at all, no site or user profile
or environment file (``--vanilla``), and ``R_LIBS_SITE`` set to the folder that holds jsonlite, so that a
library an instructor installed elsewhere (``/usr/local/lib/R/site-library``) is not seen.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from grader.messages import Message

RUNNER = Path(__file__).with_name("r_runner.R")
PACKAGES = "r-base-core r-cran-jsonlite r-cran-knitr"  # Debian's names: what an instructor installs
_PROBE = ('cat(R.home(), file.path(R.home("bin"), "exec", "R"), dirname(find.package("jsonlite")), '
          'Sys.getenv("R_SHARE_DIR"), Sys.getenv("R_INCLUDE_DIR"), Sys.getenv("R_DOC_DIR"), '
          'Sys.getenv("LD_LIBRARY_PATH"), sep = "\\n")')


@dataclass(frozen=True)
class RInstall:
    home: str
    program: str  # R_HOME/bin/exec/R: the interpreter itself, without the shell script around it
    library: str  # the folder that holds jsonlite
    env: tuple[tuple[str, str], ...]

    def child_config(self) -> dict:
        """What ``inside/serving.py``'s ``_become_r`` reads from the first frame's config (``child_config.py``)."""
        return {"exec": self.program, "env": dict(self.env)}


@functools.cache
def find() -> RInstall | None:
    """R and jsonlite as installed here, or None when either is missing."""
    r = shutil.which("R")
    if r is None:
        return None
    try:
        done = subprocess.run([r, "--vanilla", "--no-echo", "-e", _PROBE], capture_output=True, text=True,
                              timeout=60, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) < 7:
        return None
    home, program, library, share, include, doc, ld_path = lines[:7]
    ld_path = ":".join(dict.fromkeys([*ld_path.split(":"), *_linked_folders(program, f"{home}/lib/libR.so",
                                                                         f"{home}/library/stats/libs/stats.so")]))
    env = {"R_HOME": home, "R_SHARE_DIR": share, "R_INCLUDE_DIR": include, "R_DOC_DIR": doc,
           "LD_LIBRARY_PATH": ld_path, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "R_LIBS_SITE": library}
    return RInstall(home, program, library, tuple(sorted(env.items())))


def _linked_folders(*binaries: str) -> list[str]:
    """The folders of the shared libraries R loads, links resolved: Debian reaches BLAS and LAPACK through
    /etc/alternatives, which the sandbox does not show."""
    folders = []
    for binary in binaries:
        try:
            done = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        for line in done.stdout.splitlines():
            _, arrow, rest = line.partition("=>")
            target = rest.strip().split(" (")[0]
            if arrow and target.startswith("/"):
                real = Path(target).resolve()
                if real.parent != Path(target).parent:
                    folders.append(str(real.parent))
    return folders


def etc_binds() -> list[tuple[str, str]]:
    """R's own settings folder where it lies outside /usr (Debian: R_HOME/etc links to /etc/R), for the
    sandbox's view of the disk: R reads R_HOME/etc/Renviron at every start, --vanilla or not. Found
    without starting R, so that a Python-only grading pays nothing."""
    binds = []
    for home in ("/usr/lib/R", "/usr/lib64/R", "/usr/local/lib/R"):
        renviron = Path(home, "etc", "Renviron")
        if renviron.is_file() and not str(renviron.resolve()).startswith("/usr/"):
            folder = str(renviron.resolve().parent)
            binds.append((folder, folder))
    return binds


def missing() -> Message | None:
    """Why an R hand-in cannot be graded here (what to install), or None when it can."""
    if find() is None:
        return Message("intake.r_missing", {"packages": PACKAGES})
    return None
