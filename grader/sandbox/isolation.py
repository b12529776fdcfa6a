"""What a submission's process tree may see and do: bubblewrap's view of the disk, and the modes.

Modes (``--isolation``):

- ``namespaces`` (the default on Linux): the warm server runs under ``bwrap`` in new user (when not
  root), pid, network, IPC, UTS and cgroup namespaces. Its disk is read-only and holds only the
  interpreter with its standard library, the packages numpy and torch need, and the child runner;
  there is no repository, reference, other submission, output folder, network or host ``/proc``. As
  root, the server first drops to an unprivileged uid of its own with ``setpriv`` (no capabilities,
  ``no_new_privs``). Each submission is a fork of the server in namespaces of its own (see
  ``inside/server.py``).
- ``uid`` (as root, where namespaces cannot be had, e.g. a container that forbids them): a plain
  child process per submission, but as an unprivileged uid of its own (``setpriv``: no capabilities,
  ``no_new_privs``), in a ``0700`` temp dir it owns; when the submission ends, every process of that
  uid is killed. It is available only when the grader's own files (the reference, the cases) are
  closed to other users while the interpreter, numpy and torch are open to them.
- ``trusted``: a plain child process with resource limits and a scrubbed environment, as the student
  would run their own file. It guards against mistakes, not against attacks: it is what a student
  gets on a machine without namespaces (macOS), and an instructor must ask for it by name to grade a
  folder with it.
"""

from __future__ import annotations

import functools
import importlib.metadata as metadata
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import threading
from dataclasses import dataclass
from pathlib import Path

import grader
from grader.messages import Message
from grader.sandbox import r_language, uid_lifecycle
from mha.messages import DEFAULT_LANGUAGE

MODES = ("auto", "namespaces", "uid", "trusted")
SITE_VIEW = "/sandbox/site"  # where the packages the submission may import appear inside the sandbox
RUNNER = Path(__file__).with_name("inside")  # the folder run inside the sandbox (inside/__init__.py)
RUNNER_VIEW = "/sandbox/inside"
GRADER = Path(grader.__file__).parent  # the grader package's folder
# What the code inside the sandbox imports itself (numpy for the wire, torch for question 2's harness), bound and
# preloaded whatever the rubric says; what a submission may import is the rubric's alone (Rubric.imports).
PRELOADABLE = ("numpy", "torch")


class IsolationUnavailable(RuntimeError):
    """Namespaces cannot be had here; ``message`` says why and what to do (``str()`` in English)."""

    def __init__(self, message: Message):
        super().__init__(message.text(DEFAULT_LANGUAGE))
        self.message = message


@dataclass(frozen=True)
class View:
    """Read-only binds (host path -> sandbox path) and the paths hidden behind an empty tmpfs."""

    binds: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]


def _requirements(dist: metadata.Distribution) -> list[str]:
    names = []
    for req in dist.requires or []:
        if ";" in req and "extra ==" in req.split(";", 1)[1]:
            continue  # an optional extra: not needed to import the package
        names.append(re.split(r"[\s<>=!~\[;(]", req.strip(), maxsplit=1)[0])
    return names


@functools.cache
def _installed(key: str) -> tuple[tuple[str, ...], frozenset[Path]] | None:
    """What the distribution ``key`` requires and the top-level paths it installed; None when it is not installed.
    Read once per process: the namespaces probe and the server's view ask for the same ones."""
    try:
        dist = metadata.distribution(key)
    except metadata.PackageNotFoundError:
        return None
    return tuple(_requirements(dist)), frozenset(_top_levels(dist))


def _closure(roots: tuple[str, ...]) -> list[frozenset[Path]]:
    """The top-level paths of the installed distributions of ``roots`` and of everything they require, each
    distribution once."""
    seen: dict[str, frozenset[Path]] = {}
    todo = list(roots)
    while todo:
        key = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if key in seen:
            continue
        found = _installed(key)
        if found is None:
            continue
        requires, seen[key] = found
        todo += requires
    return list(seen.values())


def _top_levels(dist: metadata.Distribution) -> set[Path]:
    """The top-level files and folders a distribution installed into its site-packages."""
    base = Path(dist.locate_file("")).resolve()
    # The RECORD of torch lists some 15,000 files: take first components as strings, then stat each once.
    record = dist.read_text("RECORD")
    if record is not None:
        names = {line.split(",", 1)[0].split("/", 1)[0] for line in record.splitlines()}
    else:
        names = {str(file).replace("\\", "/").split("/", 1)[0] for file in dist.files or []}
    names -= {"..", "__pycache__", ""}
    return {base / name for name in names if not name.endswith(".pth") and (base / name).exists()}


@functools.cache
def site_view(packages: tuple[str, ...] = ()) -> tuple[tuple[str, str], ...]:
    """numpy, torch and their requirements, file by file: never a whole site-packages folder, which
    may hold this project's own wheel (the reference) or anything else an instructor installed."""
    binds = {}
    for paths in _closure(PRELOADABLE + tuple(packages)):  # packages: what the rubric lets a submission import
        for path in sorted(paths):
            binds[f"{SITE_VIEW}/{path.name}"] = str(path)
    return tuple(sorted((host, inside) for inside, host in binds.items()))


def _site_packages() -> list[str]:
    """Every site-packages folder this interpreter and its base installation may hold packages in."""
    dirs = set(site.getsitepackages() + [site.getusersitepackages()])
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    for paths in (sysconfig.get_paths(), sysconfig.get_paths(vars=base)):
        dirs.update(paths[key] for key in ("purelib", "platlib"))
    return sorted(str(Path(d).resolve()) for d in dirs if d)


def view(extra_hidden: tuple[str, ...] = (), packages: tuple[str, ...] = ()) -> View:
    prefix = str(Path(sys.base_prefix).resolve())
    binds = [("/usr", "/usr")]
    for top in ("/lib", "/lib64", "/bin", "/sbin"):
        if os.path.isdir(top) and not os.path.islink(top):
            binds.append((top, top))
    if os.path.exists("/etc/ld.so.cache"):
        binds.append(("/etc/ld.so.cache", "/etc/ld.so.cache"))
    binds += r_language.etc_binds()  # R hand-ins: R's Renviron (grader/sandbox/r_language.py)
    if not prefix.startswith("/usr/"):
        binds.append((prefix, prefix))
    binds += site_view(tuple(sorted(packages)))
    binds.append((str(RUNNER), RUNNER_VIEW))
    bound = [inside for _, inside in binds]
    project = str(GRADER.resolve().parent)  # the checkout (or site-packages) that holds the grader
    hidden = [d for d in (*_site_packages(), project, *extra_hidden) if any(_inside(d, b) for b in bound)]
    return View(tuple(binds), tuple(sorted(set(hidden))))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _ancestors(path: str) -> list[str]:
    parts = Path(path).parents
    return [str(p) for p in reversed(parts) if str(p) != "/"]


def bwrap_argv(env: dict[str, str], root: bool, packages: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap command line that starts the warm server, without the server's own argv."""
    v = view(packages=packages)
    argv = ["bwrap", "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox", "--clearenv"]
    if not root:
        argv += ["--unshare-user", "--uid", "1000", "--gid", "1000"]
    made = set()
    for host, inside in v.binds:
        for parent in _ancestors(inside):  # bubblewrap would create them 0700, closed to the server's uid
            if parent not in made and not any(_inside(parent, b) for _, b in v.binds if b != inside):
                argv += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        argv += ["--ro-bind", host, inside]
    for top in ("/lib", "/lib64", "/bin", "/sbin"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
    for path in v.hidden:
        argv += ["--tmpfs", path, "--remount-ro", path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(16 << 20), "--tmpfs", "/tmp"]
    # Nothing the server or a submission could write to outlives it or is seen by the next: the root and
    # /dev are read-only, and each submission mounts its own /tmp and /dev/shm (inside/confinement.private_view).
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    if root:  # keep only what setpriv needs to become an unprivileged uid, then nothing at all
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
                 "--", *uid_lifecycle.run_as(uid_lifecycle.server_uid())]
    else:
        argv += ["--"]
    return argv


def namespaces_problem() -> Message | None:
    """None when the namespaces mode works on this machine, else one line saying why not. A warm server that
    started in them already answered the probe's question (``namespaces_worked``): then no probe runs."""
    missing = namespaces_missing()
    if missing is not None or _NAMESPACES_WORKED.is_set():
        return missing
    return _probe()


@functools.cache
def namespaces_missing() -> Message | None:
    """What the namespaces mode needs and this machine lacks, without starting anything; None when nothing is."""
    if not sys.platform.startswith("linux"):
        return Message("isolation.not_linux", {"platform": sys.platform})
    if shutil.which("bwrap") is None:
        return Message("isolation.no_bwrap")
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return Message("isolation.no_setpriv")
    return None


def namespaces_worked() -> None:
    """Said by a warm server that started in the namespaces: the mode works here."""
    _NAMESPACES_WORKED.set()


_NAMESPACES_WORKED = threading.Event()


@functools.cache
def _probe() -> Message | None:
    """bubblewrap started once with the sandbox's view and a bare interpreter: None, or why it did not start."""
    try:
        probe = subprocess.run(
            bwrap_argv({}, os.geteuid() == 0) + [str(Path(sys.executable).resolve()), "-I", "-S", "-c", "pass"],
            capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Message("isolation.bwrap_start", {"error": str(exc)})
    if probe.returncode != 0:
        detail = probe.stderr.decode(errors="replace").strip().splitlines()
        return Message("isolation.bwrap_namespaces", {"detail": detail[-1] if detail else probe.returncode})
    return None


def passable(path: Path) -> bool:
    """Whether every folder on the way to ``path`` (itself included, if a folder) lets other users through."""
    path = path.resolve()
    folders = [*([path] if path.is_dir() else []), *path.parents]
    return all(folder.stat().st_mode & 0o001 for folder in folders if str(folder) != "/")


def _open_to_others(path: Path) -> bool:
    """Whether a user who is neither owner nor in the group can read ``path`` (and reach it)."""
    path = path.resolve()
    return passable(path.parent) and bool(path.stat().st_mode & 0o004)


def package_origins() -> list[Path]:
    """The ``__init__.py`` of numpy and torch, found without importing either."""
    import importlib.util

    origins = []
    for name in PRELOADABLE:
        spec = importlib.util.find_spec(name)
        if spec and spec.origin:
            origins.append(Path(spec.origin))
    return origins


def _grader_files() -> dict[Path, Path]:
    """The files a submission must not read (question 1's case generator, the reference), each with the folder
    to close: the grader's whole package for its own file."""
    import importlib.util

    files = {GRADER / "functions" / "cases.py": GRADER}
    spec = importlib.util.find_spec("mha.reference")
    if spec and spec.origin:
        files[Path(spec.origin)] = Path(spec.origin).parent
    return files


@functools.cache
def uid_problem() -> Message | None:
    """None when the uid mode can run here, else one line saying why not."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return Message("isolation.uid_needs_root")
    if shutil.which("setpriv") is None:
        return Message("isolation.no_setpriv")
    for path in [Path(sys.executable), *package_origins()]:
        if not _open_to_others(path):
            return Message("isolation.closed_to_others", {"path": path})
    for path, folder in _grader_files().items():
        if _open_to_others(path):
            return Message("isolation.grader_open", {"path": path, "folder": folder})
    return None


def choose(requested: str, batch: bool) -> tuple[str, Message | None]:
    """The mode to use for ``requested`` and, when it is weaker than asked, why (one line)."""
    if requested != "auto":
        problem = {"namespaces": namespaces_problem, "uid": uid_problem}.get(requested, lambda: None)()
        if problem:
            raise IsolationUnavailable(Message("isolation.unavailable", {"mode": requested, "problem": problem}))
        return requested, None
    problem = namespaces_problem()
    if problem is None:
        return "namespaces", None
    if uid_problem() is None:
        return "uid", problem
    if batch:
        raise IsolationUnavailable(Message("isolation.none_for_batch",
                                           {"problem": problem, "uid_problem": uid_problem()}))
    return "trusted", problem
