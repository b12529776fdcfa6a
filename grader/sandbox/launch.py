"""Starting and ending a submission's process tree: the warm server in namespaces, or a plain child.

A launcher hands out ``Child`` handles (four pipe ends and a way to end the whole tree). The warm
server (``WarmServer``) runs ``inside/`` (``serve``) under bubblewrap, imports numpy and torch once
per batch and forks an isolated child per submission; ``DirectLauncher`` starts a plain interpreter
per submission (the trusted mode). Both are safe to use from several grading threads at once.

What a launcher hands the session (``Child``, ``LaunchError``) is ``child.py``'s; where a child's memory is
counted, ``memory_placement.py``'s; a uid's life in the uid mode, ``uid_lifecycle.py``'s. A launcher takes what to
preload (``preload_for`` chooses it from sources), never the sources themselves.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from grader.sandbox import isolation, uid_lifecycle
from grader.sandbox.child import Child, LaunchError, StopTree, exit_code, rlimits
from grader.sandbox.limits import MEMORY_KILLED, Limits
from grader.sandbox.memory_placement import Placement

try:
    import resource
except ImportError:  # Windows: no resource limits; only the trusted mode runs there, and it says so
    resource = None
from mha.messages import DEFAULT_LANGUAGE

# One thread each: predictable timing, and --jobs N children do not fight over cores.
THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
CHILD_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp", "TMPDIR": "/tmp", **THREAD_ENV}


_UCRED = struct.Struct("iII")  # SCM_CREDENTIALS: pid, uid, gid


class Launcher(Protocol):
    """What a session asks of a launcher (``WarmServer``, ``DirectLauncher``, or a batch's ``Watched`` one)."""

    site_dirs: list[str]  # where the child finds numpy and torch on its own disk ([]: the launcher's view has them)
    placement: Placement  # how the submissions share the memory

    def spawn(self, limits: Limits) -> Child: ...

    def alive(self) -> bool:
        """False once no more children can be started (the warm server died under a submission)."""

    def close(self) -> None: ...


def _pipes() -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]:
    return os.pipe(), os.pipe(), os.pipe(), os.pipe()


# What a correct submission's tree needs, about three times what one held at its peak (docs/isolation.md):
# a fork of the warm server shares the imported torch and pays only for the pages it writes (27 MiB for
# question 1 in torch, 41 MiB for question 2's module); a plain interpreter imports torch itself (168 MiB).
FORK_FLOOR = 128 * 1024**2
INTERPRETER_FLOOR = 384 * 1024**2
# The warm server with torch imported, before its first fork (it held about 250 MiB with the grader): what a
# plan made before the server starts keeps aside for it.
SERVER_ESTIMATE = 384 * 1024**2


class WarmServer:
    """The bubblewrapped server; started on first use, restarted if it dies."""

    def __init__(self, preload: tuple[str, ...] = (), start_timeout: float = 120.0, *,
                 packages: tuple[str, ...], jobs: int = 1):
        self.packages = tuple(packages)  # what the rubric lets a submission import, bound into the sandbox's view
        self.site_dirs: list[str] = []  # the server tells its children where the packages are (SITE_VIEW)
        self.preload = tuple(p for p in isolation.PRELOADABLE if p in preload or p == "numpy")  # numpy: the wire's
        self.start_timeout = start_timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._log = None
        self._keeper: threading.Event | None = None  # set to let the thread that started the server end
        self.placement = Placement(jobs, FORK_FLOOR, SERVER_ESTIMATE)

    # -------------------------------------------------------------- the server process
    def _start(self) -> None:
        problem = isolation.namespaces_missing()  # the probe is the command line's (choose); this start answers it too
        if problem:
            raise LaunchError(problem.text(DEFAULT_LANGUAGE))  # English, like every LaunchError: a diagnostic
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {**CHILD_ENV, "GRADER_SITE_DIRS": json.dumps([isolation.SITE_VIEW]),
               "GRADER_PRELOAD": ",".join(self.preload)}
        argv = isolation.bwrap_argv(env, os.geteuid() == 0, self.packages) + [
            str(Path(sys.executable).resolve()), "-I", "-S", "-B", isolation.RUNNER_VIEW, "serve", str(theirs.fileno())]
        self._log = tempfile.TemporaryFile()
        try:
            self._proc = self._popen_kept(argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                          stdout=self._log, stderr=self._log, start_new_session=True)
        finally:
            theirs.close()
        self._sock = ours
        ready = self._recv(self.start_timeout)
        if not ready.get("ready"):
            raise LaunchError(f"the sandbox server did not start: {self._log_tail()}")
        isolation.namespaces_worked()

    def _popen_kept(self, argv: list[str], **options) -> subprocess.Popen:
        """Popen from a thread of its own that lives until the server is stopped.

        bubblewrap's --die-with-parent is PR_SET_PDEATHSIG, which follows the *thread* that started it:
        started from a batch's pool worker, the server was killed as soon as the pool shut down, under a
        submission graded after it (the regrade of those that ran out of time)."""
        started: list = []
        ready, release = threading.Event(), threading.Event()

        def keeper() -> None:
            try:
                started.append(subprocess.Popen(argv, **options))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
                started.append(exc)
            ready.set()
            release.wait()

        threading.Thread(target=keeper, name="sandbox-server", daemon=True).start()
        ready.wait()
        if isinstance(started[0], BaseException):
            raise started[0]
        self._keeper = release
        return started[0]

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read()[-400:].decode(errors="replace").strip()

    def _recv(self, timeout: float) -> dict:
        self._sock.settimeout(timeout)
        try:
            data = self._sock.recv(1 << 16)
        except OSError as exc:
            data, why = b"", str(exc)
        else:
            why = "it exited"
        if not data:
            self._stop()
            raise LaunchError(f"the sandbox server stopped answering ({why}): {self._log_tail()}")
        return json.loads(data)

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.set()

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def warm(self) -> None:
        """Start the server now rather than at the first spawn (a lone file: while the intake reads it)."""
        with self._lock:
            if not self.alive():
                self._stop()
                self._start()

    def close(self) -> None:
        with self._lock:
            self._stop()
            if self._log is not None:
                self._log.close()
                self._log = None
        self.placement.close()

    def __enter__(self) -> WarmServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -------------------------------------------------------------- children
    def spawn(self, limits: Limits) -> Child:
        (req_r, req_w), (resp_r, resp_w), (out_r, out_w), (err_r, err_w) = _pipes()
        # The fork says hello on this socket before it does anything else: the kernel tells us its pid
        # in our own pid namespace, which the server cannot (it lives in bubblewrap's).
        meet, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        meet.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        request = {"op": "spawn", "rlimits": rlimits(limits), "tmp_bytes": limits.tmp_bytes}
        pid = None
        try:
            with self._lock:
                if not self.alive():
                    self._stop()
                    self._start()
                try:
                    socket.send_fds(self._sock, [json.dumps(request).encode()],
                                    [req_r, resp_w, out_w, err_w, theirs.fileno()])
                except OSError as exc:
                    self._stop()
                    raise LaunchError(f"the sandbox server stopped answering ({exc})") from exc
                pid = self._recv(30.0)["pid"]
            theirs.close()
            group = self._meet(meet, limits)
        except BaseException:
            if pid is not None:
                self._kill(pid, 0.0)
            for fd in (req_w, resp_r, out_r, err_r):
                os.close(fd)
            raise
        finally:
            theirs.close()
            meet.close()
            for fd in (req_r, resp_w, out_w, err_w):
                os.close(fd)

        def end(grace: float) -> int | None:
            try:
                code = self._kill(pid, grace)
            finally:
                killed = self.placement.release(group)
            return exit_code(code, killed)

        return Child(req_w, resp_r, out_r, err_r, end)

    def _meet(self, meet: socket.socket, limits: Limits) -> Path | None:
        """Place the new fork (cgroup, oom score) before it starts the submission's processes."""
        meet.settimeout(30.0)
        try:
            data, ancdata, _, _ = meet.recvmsg(16, socket.CMSG_SPACE(_UCRED.size))
        except OSError as exc:
            raise LaunchError(f"the submission's process did not start ({exc})") from exc
        creds = [d for level, kind, d in ancdata if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS]
        if data != b"hello" or not creds:
            raise LaunchError("the submission's process did not start")
        pid, _, _ = _UCRED.unpack(creds[0][:_UCRED.size])
        group = self.placement.place(pid, limits)
        try:
            meet.sendall(b"go")
        except OSError as exc:
            self.placement.release(group)
            raise LaunchError(f"the submission's process did not start ({exc})") from exc
        return group

    def _kill(self, pid: int, grace: float) -> int | None:
        with self._lock:
            if not self.alive():
                return None
            try:
                self._sock.sendall(json.dumps({"op": "kill", "pid": pid, "grace": grace}).encode())
                return self._recv(30.0).get("status")
            except (OSError, LaunchError):
                self._stop()
                return None


class DirectLauncher:
    """A fresh ``python -I -S`` per submission, in a private ``0700`` temp dir, with rlimits.

    ``separate_uids`` (the uid mode, as root): each child runs as a uid never used before (no account,
    no process, no file, no key, no IPC object: checked by ``uid_lifecycle.free_uid``), owns its temp dir,
    and when the submission ends every process, file, IPC object and key of that uid is removed
    (``uid_lifecycle.release``)."""

    def __init__(self, separate_uids: bool = False, jobs: int = 1):
        self.site_dirs = site_dirs()
        self.separate_uids = separate_uids
        self.placement = Placement(jobs, INTERPRETER_FLOOR)
        if separate_uids:
            uid_lifecycle.prepare()  # the walk of the disk, once, before any submission's clock starts
        self._used: set[int] = set()
        self._lock = threading.Lock()

    def _take_uid(self) -> int | None:
        if not self.separate_uids:
            return None
        with self._lock:
            uid = uid_lifecycle.free_uid(self._used)
            self._used.add(uid)
            return uid

    def spawn(self, limits: Limits) -> Child:
        (req_r, req_w), (resp_r, resp_w), (out_r, out_w), (err_r, err_w) = _pipes()
        uid = self._take_uid()
        # 0700: no other user can read the submission; in the uid mode its parent must be passable
        tmp = tempfile.mkdtemp(prefix="grader-", dir=None if uid is None else _passable_tmp())
        runner, prefix, keyrings = str(isolation.RUNNER), [], ""
        if uid is not None:  # the runner is copied: the grader's own folder stays closed to this uid
            keyrings = uid_lifecycle.lock_keys(uid)  # no key of the submission outlives it
            runner = _readable_copy(isolation.RUNNER, Path(tmp, ".grader_inside"))
            os.chown(tmp, uid, uid)
            prefix = uid_lifecycle.run_as(uid)
        env = {**CHILD_ENV, "HOME": tmp, "TMPDIR": tmp}
        try:
            proc = subprocess.Popen(
                [*prefix, os.path.realpath(sys.executable), "-I", "-S", "-B", runner, "direct", str(req_r),
                 str(resp_w)],
                pass_fds=(req_r, resp_w), cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                stdout=out_w, stderr=err_w, start_new_session=True)
        except OSError as exc:
            self._release(uid, tmp, None, keyrings)
            for fd in (req_w, resp_r, out_r, err_r):
                os.close(fd)
            raise LaunchError(f"could not start Python: {exc}") from exc
        finally:
            for fd in (req_r, resp_w, out_w, err_w):
                os.close(fd)
        # Limits, cgroup and oom score go on before the child reads its first frame, i.e. before any
        # student code runs.
        for name, value in rlimits(limits).items() if resource is not None else ():
            try:
                resource.prlimit(proc.pid, getattr(resource, name), (value, value))
            except (ProcessLookupError, PermissionError, ValueError):
                pass
        try:
            group = self.placement.place(proc.pid, limits)
        except LaunchError:
            _kill_group(proc)
            self._release(uid, tmp, None, keyrings)
            for fd in (req_w, resp_r, out_r, err_r):
                os.close(fd)
            raise

        def end(grace: float) -> int | None:
            try:
                try:
                    code = proc.wait(timeout=grace) if grace else _kill_group(proc)
                except subprocess.TimeoutExpired:
                    code = _kill_group(proc)
            finally:
                killed = self._release(uid, tmp, group, keyrings)
            return exit_code(code, killed)

        return Child(req_w, resp_r, out_r, err_r, end)

    def _release(self, uid: int | None, tmp: str, group: Path | None = None, keyrings: str = "") -> bool:
        """Remove everything of the submission; whether the kernel killed one of its processes for memory."""
        try:
            if uid is not None:
                uid_lifecycle.release(uid, keyrings)  # before the group goes: its /dev/shm files count there
            shutil.rmtree(tmp, ignore_errors=True)
        finally:
            killed = self.placement.release(group)
        return killed

    def alive(self) -> bool:
        return True  # a fresh interpreter per submission: nothing shared that could die

    def close(self) -> None:
        self.placement.close()


def _passable_tmp() -> str:
    """The temp folder, or /tmp when some folder on the way to it is closed to other users."""
    path = Path(tempfile.gettempdir())
    return str(path.resolve()) if isolation.passable(path) else "/tmp"


def _readable_copy(folder: Path, target: Path) -> str:
    """A copy of the runner's folder (its ``.py`` files only) that any uid may read and none may change, whatever
    setup.sh made of the original's permissions."""
    shutil.copytree(folder, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in target.iterdir():
        path.chmod(0o444)
    target.chmod(0o555)
    return str(target)


def _kill_group(proc: subprocess.Popen) -> int | None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: threads, forks and all
    except (ProcessLookupError, PermissionError):
        pass
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return None


def site_dirs() -> list[str]:
    """The site-packages directories holding numpy and torch, found without importing torch."""
    dirs = [str(origin.resolve().parent.parent) for origin in isolation.package_origins()]
    return list(dict.fromkeys(dirs))


def needs_torch(sources: Iterable[bytes]) -> bool:
    """Whether any of these sources (what the intake read, or a first look at a file) mentions torch."""
    return any(b"torch" in source for source in sources)


def preload_for(sources: Iterable[bytes]) -> tuple[str, ...]:
    """What a launcher for these sources' submissions imports up front, beyond numpy: torch when one mentions it
    (the warm server then imports it once for all)."""
    return ("torch",) if needs_torch(sources) else ()


def preloads_torch(launcher: Launcher) -> bool:
    """Whether ``launcher``'s children find torch imported already (a warm server that preloaded it)."""
    return "torch" in getattr(launcher, "preload", ())


def launcher(mode: str, preload: tuple[str, ...], packages: tuple[str, ...], jobs: int = 1) -> Launcher:
    """The launcher for ``mode`` (a resolved mode of ``isolation.MODES``) and ``jobs`` submissions at once;
    ``preload``: what its children should find imported already, beyond numpy (``preload_for``; a warm server
    imports it once, a plain interpreter per submission imports what it needs); ``packages``: what the rubric lets
    a submission import (``grader.rubric.Rubric.imports``). The caller closes it."""
    if mode == "trusted":
        return DirectLauncher(jobs=jobs)
    if mode == "uid":
        return DirectLauncher(separate_uids=True, jobs=jobs)
    if mode != "namespaces":
        raise ValueError(f"isolation must be one of namespaces, uid, trusted, got {mode!r}")
    return WarmServer(preload, packages=packages, jobs=jobs)


class Watched:
    """A launcher as one submission sees it: the same launcher, counting the children of this submission
    that the kernel killed for want of memory (a batch grades such a submission again, alone)."""

    def __init__(self, launcher: Launcher):
        self.launcher = launcher
        self.memory_kills = 0
        self.site_dirs = launcher.site_dirs
        self.placement = launcher.placement

    def spawn(self, limits: Limits) -> Child:
        child = self.launcher.spawn(limits)
        return replace(child, stop_tree=self._counted(child.stop_tree))

    def _counted(self, stop_tree: StopTree) -> StopTree:
        def counted(grace: float) -> int | None:
            code = stop_tree(grace)
            if code == MEMORY_KILLED:
                self.memory_kills += 1
            return code

        return counted

    def alive(self) -> bool:
        return self.launcher.alive()

    def close(self) -> None:
        """Nothing: the batch that made the launcher closes it."""
