"""One lone file's sandbox, started before its hand-in is read: a student's own check pays for the sandbox's start
(a bubblewrap, an interpreter importing numpy) while the intake reads the file and the grader imports its judges.

What the server imports up front is chosen from the files' first bytes (``PEEKED_BYTES``); ``fitting`` hands the
launcher over only if the hand-in the intake made needs the same, else the sandbox starts its own as it would have.
"""

from __future__ import annotations

import threading
from pathlib import Path

from grader.intake import reading
from grader.sandbox import launch

PEEKED_BYTES = 4 * 1024 * 1024  # of a lone file and its helpers, looked at to choose what its sandbox imports up front


class EarlyLauncher:
    """The launcher for ``mode`` started in a thread of its own; ``imports``: the rubric's (the view's packages)."""

    def __init__(self, mode: str, paths: list[Path], imports: tuple[str, ...]):
        self.mode = mode
        looked = [reading.peek(path, PEEKED_BYTES) for path in paths]  # before the intake reads them
        self.launcher = launch.launcher(mode, launch.preload_for(looked), imports)
        self._failed: Exception | None = None
        self._thread = threading.Thread(target=self._warm, name="early-sandbox", daemon=True)
        self._thread.start()

    def _warm(self) -> None:
        try:
            if isinstance(self.launcher, launch.WarmServer):
                self.launcher.warm()
        except Exception as exc:  # noqa: BLE001 - raised in the grading thread, as a spawn's failure would be
            self._failed = exc

    def started(self) -> bool:
        """Wait for the launcher's start; whether it started (a launcher with nothing to start did)."""
        self._thread.join()
        return self._failed is None

    def fitting(self, source: bytes) -> launch.Launcher | None:
        """The launcher, for a hand-in of this ``source``, when it preloads what that needs; else None."""
        self._thread.join()
        if self._failed is not None:
            raise self._failed
        if isinstance(self.launcher, launch.WarmServer) and \
                launch.preloads_torch(self.launcher) != launch.needs_torch([source]):
            return None
        return self.launcher

    def close(self) -> None:
        self._thread.join()
        self.launcher.close()
