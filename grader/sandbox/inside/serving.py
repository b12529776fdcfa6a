"""The child side of the sandbox: a warm server that forks one isolated child per submission.

Run by the parent as ``python -I -S child_runner.py serve CTL_FD`` inside bubblewrap (see
``isolation.py`` beside it), or as ``python -I -S child_runner.py direct IN_FD OUT_FD`` in trusted mode.
This file imports only the standard library (and numpy, torch once the parent has said where they
live); it never imports ``grader`` or ``mha``, which are not even in the sandbox's view of the disk.

The server imports numpy (and torch, when a submission will need it) once, then for each submission
receives four pipe ends over its control socket and forks. The fork enters a new user, mount, pid, IPC
and network namespace (nested inside bubblewrap's), so a submission sees none of the server's or the
other submissions' processes, and cannot reach another submission graded at the same time; its first
process is pid 1 there, killed by the kernel with every process it started when the server kills the
fork. It gets a fresh ``/proc`` (or none), a private size-capped ``/tmp``, its resource limits, no
capabilities, and only then imports the student's file.

The wire (the one description of it; ``session.py`` reads the same constants and codec from this file, and
any other runner, e.g. one for R, speaks exactly this):

- A frame is ``token (16 bytes) | header length (u32 LE) | blob length (u64 LE) | header | blob``: the
  header is UTF-8 JSON (an object), the blob raw bytes. The token is the grader's random one for this child;
  the child repeats it on every frame it writes.
- A value (an argument, either way) is a JSON descriptor, with arrays' numbers in the blob:
  ``{"kind": "scalar", "value": int | bool}``, ``{"kind": "list", "items": [descriptor, ...]}``, or
  ``{"kind": "matrix", "shape": [d0, d1, ...], "offset": BYTE}``: an array of any rank up to ``MAX_RANK``
  (the name is from when every array was 2-D), its entries float64 little-endian in C order from ``offset``.
- Grader to child. First frame: the config (an object) and the submission's source as the blob. Then one
  call at a time: ``{"id": N, "function": NAME, "args": [descriptor], "kwargs": {NAME: descriptor}}``, and
  optionally ``"helpers": [NAME, ...]``: during this call those names of the submission's module answer
  through the grader (a helper request, below). Answer to a helper request: ``{"id": N, "ok": true, "shape":
  [...], "dtype": "float64"}`` with the entries as the blob, or ``{"id": N, "ok": false, "error": TEXT}``.
- Child to grader. After loading: ``{"ready": true, "functions": [NAME], "skipped": [...]}`` or ``{"ready":
  false, "error": TEXT, "error_type": NAME, "line": INT}``. During a call that named helpers, any number of
  helper requests ``{"id": N, "helper": NAME, "args": [...], "kwargs": {...}}`` (blob as for a call), each
  waiting for its answer. Then the call's answer: ``{"id": N, "ok": true, "shape": [...], "dtype": NAME}``
  with the result's entries as float64 in the blob; ``{"id": N, "ok": false, "too_big": ENTRIES}``; or
  ``{"id": N, "ok": false, "stage": "call" | "convert", "dtype": NAME, "error": TEXT, "error_type": NAME,
  "line": INT}``.

The expected answers, the reference and the case generator are never sent here, and nothing of them runs
here: the grader parses the numbers and compares them itself, and computes a helper's value itself when it
stands in for one of the submission's (attribution). Nothing the student's code can read or forge here is
worth any points; every byte the grader reads from here is checked before use.
"""

import __future__

import ast
import builtins
import ctypes
import importlib.abc
import importlib.util
import json
import os
import signal
import socket
import struct
import sys
import time
import traceback

try:
    import resource
except ImportError:  # Windows: the trusted mode runs without resource limits (the grader says so)
    resource = None

# Every frame starts so, both ways: the token, the header length, the blob length. The grader reads this
# definition too (session.py imports it from this file).
FRAME_HEAD = struct.Struct("<16sIQ")
_BLOCKED = ("grader", "mha")

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 1, 38, 4
CONTROL_BYTES = 1 << 16  # the largest control message
_ABSENT = object()  # a name the submission's module did not define
INSIDE_ID = 1000  # the uid and gid a submission has inside its namespaces (never 0)


class _BlockGraderPackages(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: a clear message if a submission imports the grader's packages."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in _BLOCKED:
            raise ImportError(
                f"the package '{name.split('.')[0]}' belongs to the grader and cannot be imported by a submission",
                name=name,
            )
        return None


def _read_exact(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the grader closed the pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_frame(fd):
    token, header_len, blob_len = FRAME_HEAD.unpack(_read_exact(fd, FRAME_HEAD.size))
    return token, json.loads(_read_exact(fd, header_len)), _read_exact(fd, blob_len)


# ------------------------------------------------------------------------------------------ the values
# What a descriptor may hold (the docstring above): both sides decode with these caps, and the grader turns
# anything beyond them into a protocol error. No dimension reaches 2**31, so no product of MAX_RANK of them
# overflows numpy's 64-bit sizes before the entry cap is checked.
MAX_RANK = 64  # numpy 2's most dimensions
MAX_DIM = 2**31 - 1
MAX_ITEMS = 256  # entries of one list, and arguments of one call
MAX_NESTING = 4  # lists within lists
MAX_NAME = 256  # characters of a keyword
MAX_SCALAR = 2**64  # the widest int sent (a torch seed takes 64 bits)
FLOAT64 = "<f8"


class WireError(ValueError):
    """Bytes that are not a frame or a value as the module docstring describes them."""


def encode_values(args, kwargs, np):
    """``args`` and ``kwargs`` as descriptors, and the blob that holds their arrays' entries."""
    blob = bytearray()

    def enc(value):
        if isinstance(value, (bool, np.bool_)):
            return {"kind": "scalar", "value": bool(value)}
        if isinstance(value, (int, np.integer)):
            return {"kind": "scalar", "value": int(value)}
        if isinstance(value, (list, tuple)):
            return {"kind": "list", "items": [enc(v) for v in value]}
        if hasattr(value, "detach"):  # a torch tensor: leave autograd and the GPU behind
            value = value.detach().cpu()
        array = np.array(value, dtype=FLOAT64, order="C")  # a float stays 0-D (ascontiguousarray makes it 1-D)
        offset = len(blob)
        blob.extend(array.tobytes())
        return {"kind": "matrix", "shape": [int(s) for s in array.shape], "offset": offset}

    return [enc(a) for a in args], {str(k): enc(v) for k, v in kwargs.items()}, bytes(blob)


def array_from(shape, blob, offset, np, budget):
    """The float64 array ``shape`` describes at ``offset`` of ``blob``, a copy; ``budget`` is a one-item list of
    the entries still allowed, spent here. Every field is checked before anything is allocated."""
    if type(shape) is not list or len(shape) > MAX_RANK or not all(type(d) is int and 0 <= d <= MAX_DIM
                                                                   for d in shape):
        raise WireError("a shape that is not a list of sizes")
    size = 1
    for d in shape:
        size *= d
    if size > budget[0]:
        raise WireError("more entries than allowed")
    if type(offset) is not int or offset < 0 or offset + 8 * size > len(blob):
        raise WireError("entries outside the blob")
    budget[0] -= size
    try:
        if size == 0:
            return np.zeros(shape, dtype=np.float64)
        return np.frombuffer(blob, dtype=FLOAT64, count=size, offset=offset).reshape(shape).astype(np.float64)
    except (ValueError, TypeError, OverflowError, MemoryError) as exc:  # e.g. (0, 2**31 - 1, ...): too big to make
        raise WireError(f"a shape numpy cannot make: {exc}") from None


def decode_values(args, kwargs, blob, np, max_entries):
    """The arguments ``args`` (a list of descriptors) and ``kwargs`` (a name -> descriptor object) describe;
    WireError for anything else, with at most ``max_entries`` entries in all."""
    budget = [max_entries]

    def dec(desc, depth):
        kind = desc.get("kind") if type(desc) is dict else None
        if kind == "scalar":
            value = desc.get("value")
            if type(value) is bool or (type(value) is int and -MAX_SCALAR <= value <= MAX_SCALAR):
                return value
            raise WireError("a scalar that is not an int or a bool")
        if kind == "list" and depth < MAX_NESTING:
            items = desc.get("items")
            if type(items) is not list or len(items) > MAX_ITEMS:
                raise WireError("a list that is not a list of values")
            return [dec(item, depth + 1) for item in items]
        if kind == "matrix":
            return array_from(desc.get("shape"), blob, desc.get("offset"), np, budget)
        raise WireError("a value of no known kind")

    if type(args) is not list or type(kwargs) is not dict or len(args) + len(kwargs) > MAX_ITEMS:
        raise WireError("arguments that are not a list and an object")
    if not all(type(k) is str and len(k) <= MAX_NAME for k in kwargs):  # "w:NAME" keywords are not identifiers
        raise WireError("a keyword that is not a name")
    return [dec(a, 0) for a in args], {k: dec(v, 0) for k, v in kwargs.items()}


# ---------------------------------------------------------------------------------------- isolation
_libc = ctypes.CDLL(None, use_errno=True) if os.name == "posix" else None  # Windows: the trusted mode only


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write_file(path, text):
    with open(path, "w") as f:
        f.write(text)


def _enter_namespaces():
    """New user, mount, pid, IPC and network namespaces; the caller's uid is root only inside them.

    The network namespace is the submission's own, with only a loopback that is down: without it, every
    submission forked from one server shares the server's loopback and abstract Unix sockets, and two
    students graded at once in a batch could talk to each other.
    """
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET), "unshare")
    _write_file("/proc/self/setgroups", "deny")
    _write_file("/proc/self/uid_map", f"{INSIDE_ID} {uid} 1")
    _write_file("/proc/self/gid_map", f"{INSIDE_ID} {gid} 1")


def _mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source, target, fstype, ctypes.c_ulong(flags), data), f"mount {target}")


def _private_view(tmp_bytes):
    """This submission's own /proc (its pid namespace only) and its own size-capped /tmp."""
    _mount(None, b"/", None, MS_REC | MS_PRIVATE)
    try:
        _mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:  # the kernel refuses a new proc over a partly covered one: hide /proc instead
        _mount(b"tmpfs", b"/proc", b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=4k,mode=0555")
    _mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_bytes},mode=0700".encode())
    # POSIX shared memory of its own too: bubblewrap's /dev/shm is read-only and shared by the whole batch
    _mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={tmp_bytes},mode=0700".encode())


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_privileges(limits):
    """No capabilities, no way to gain any, and the resource limits of the whole submission."""
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()  # _LINUX_CAPABILITY_VERSION_3: all empty
    _check(_libc.capset(ctypes.byref(header), data), "capset")
    for name, value in limits.items():
        which = getattr(resource, name)
        resource.setrlimit(which, (value, value))


def _first_to_die():
    """oom_score_adj 1000, inherited by every process the submission starts: under memory pressure the
    kernel kills a submission before the server or the grader. Written while this process is still
    dumpable (a non-dumpable one's /proc files belong to root) and before any namespace."""
    try:
        _write_file("/proc/self/oom_score_adj", "1000")
    except OSError:
        pass


def _meet_the_grader(sock):
    """Say hello on the grader's socket (the kernel attaches this process's pid as the grader sees it) and
    wait until it has put this process in the submission's memory cgroup: every process forked after
    this one is counted there."""
    sock.sendall(b"hello")
    if sock.recv(16) != b"go":
        raise RuntimeError("the grader did not place this submission")
    sock.close()


def _own_session_keyring():
    """A new, empty session keyring: a key the submission adds there dies with its processes, and the
    grader's own session keyring (which a child would otherwise share, and could write to) stays out of
    reach. KEYCTL_JOIN_SESSION_KEYRING with no name."""
    machine = os.uname().machine if _libc is not None else ""  # Windows has no kernel keys
    number = {"x86_64": 250, "aarch64": 219}.get(machine)  # the keyctl system call
    if number is not None:
        _libc.syscall(number, 1, None)


def _exit_like(status, in_namespace_init=False):
    """Exit the way a child did, so that the server's waitpid sees the child's own status.

    The namespace's pid 1 ignores signals it sends itself, so it passes a signal on as 128 + signal
    and the reaper outside turns that back into the signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if in_namespace_init:
            os._exit(128 + sig)
    else:
        code = os.waitstatus_to_exitcode(status)
        if in_namespace_init or code <= 128:
            os._exit(code)
        sig = code - 128
    if sig not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler to reset (signal() raises)
        signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)


def _spawn(config, fds):
    """The forked side of the server: a reaper here, an init in new namespaces, the submission under it.

    The submission never runs as pid 1 (which would ignore its own signals); its init mounts the
    private view, reaps whatever the submission starts, and when the submission's process ends,
    exits, which makes the kernel kill every process left in the namespace."""
    req_r, resp_w, out_w, err_w = fds[:4]
    _first_to_die()
    if len(fds) > 4:
        _meet_the_grader(socket.socket(fileno=fds[4]))
    _own_session_keyring()
    # A session and process group of its own: a process group reaches across pid namespaces, so
    # killpg(0, ...) must find only this submission's processes, never the server or another's.
    os.setsid()
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    _enter_namespaces()
    init = os.fork()
    if init:  # the reaper, in the server's pid namespace: killing it ends the whole submission
        _close_all_but_devnull((req_r, resp_w, out_w, err_w))
        _, status = os.waitpid(init, 0)
        _exit_like(status)
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")
    _private_view(int(config["tmp_bytes"]))
    os.makedirs("/tmp/work", mode=0o700)
    student = os.fork()
    if student == 0:
        os.chdir("/tmp/work")
        _drop_privileges(config["rlimits"])
        os.close(out_w)
        os.close(err_w)
        serve_submission(req_r, resp_w)
        os._exit(0)
    _close_all_but_devnull((req_r, resp_w, out_w, err_w))
    while True:
        pid, status = os.wait()
        if pid == student:
            _exit_like(status, in_namespace_init=True)


def _close_all_but_devnull(fds):
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        os.close(fd)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


def _wait_briefly(pid, seconds):
    """The child's wait status if it exits within ``seconds`` (a crash being reported), else None."""
    deadline = time.monotonic() + seconds
    while True:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            return raw
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def serve(ctl_fd, site_dirs, preload):
    """The warm server: preload once, then fork an isolated child per spawn request."""
    sys.path[:] = [p for p in sys.path if p] + list(site_dirs)
    for name in preload:
        module = __import__(name)
        if name == "torch":
            module.set_num_threads(1)  # no thread pool in the server: forks stay single-threaded
    ctl = socket.socket(fileno=ctl_fd)
    ctl.sendall(json.dumps({"ready": True, "pid": os.getpid()}).encode())
    children = set()
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(ctl, CONTROL_BYTES, 5)
        except OSError:
            data, fds = b"", []
        if not data:
            return  # the grader went away: bubblewrap's pid 1 takes every child with it
        request = json.loads(data)
        if request["op"] == "spawn":
            pid = os.fork()
            if pid == 0:
                code = 70
                try:
                    ctl.close()
                    _spawn(request, fds)
                    code = 0
                except BaseException:  # noqa: BLE001 - the set-up failed: the grader sees a crash
                    traceback.print_exc()
                finally:
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            children.add(pid)
            ctl.sendall(json.dumps({"pid": pid}).encode())
        elif request["op"] == "kill":
            pid = request["pid"]
            status = None
            if pid in children:
                raw = _wait_briefly(pid, float(request.get("grace", 0)))
                if raw is None:
                    os.kill(pid, signal.SIGKILL)
                    _, raw = os.waitpid(pid, 0)
                children.discard(pid)
                status = os.waitstatus_to_exitcode(raw)
            ctl.sendall(json.dumps({"status": status}).encode())


# ------------------------------------------------------------------------------ loading, as a notebook runs
class _StatementTimeout(BaseException):
    """A top-level statement ran past its budget (raised by SIGALRM between two bytecodes)."""


def _on_alarm(signum, frame):
    raise _StatementTimeout


CELL_RUNNING_MAGICS = ("time", "timeit", "capture", "prun")  # %%time etc. run their cell; others do nothing


class _IPythonStub:
    """``get_ipython()`` where grading happens: shell lines and magics do nothing, as the note says."""

    def system(self, *args, **kwargs):
        return 0

    def getoutput(self, *args, **kwargs):
        return []

    def run_cell_magic(self, magic, line, cell):
        caller = sys._getframe(1).f_globals
        if magic in CELL_RUNNING_MAGICS:
            exec(compile(cell, "<cell>", "exec"), caller)
        elif magic == "writefile":  # a notebook writing its own helper module, then importing it
            args = line.split()
            if args:
                with open(os.path.basename(args[-1]), "a" if "-a" in args else "w", encoding="utf-8") as f:
                    f.write(cell)

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _install_jupyter_stubs():
    """What a notebook finds without importing it: ``get_ipython`` and ``display``; plots go nowhere."""
    stub = _IPythonStub()
    builtins.get_ipython = lambda: stub
    builtins.display = lambda *args, **kwargs: None
    os.environ["MPLBACKEND"] = "Agg"  # no window to open: plt.show() has nothing to show
    os.environ.setdefault("MPLCONFIGDIR", os.path.abspath(".matplotlib"))
    import warnings

    warnings.filterwarnings("ignore", message=".*non-interactive, and thus cannot be shown")


class _AllowedImports(importlib.abc.MetaPathFinder):
    """The submission's own imports: the standard library, the allowed packages and its helper modules."""

    def __init__(self, allowed, own_files, workdir):
        self.allowed = set(allowed)
        self.own_files = set(own_files)
        self.workdir = workdir  # helper modules, handed in or written by %%writefile, are files here

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        # A name already in sys.modules never reaches this finder (the import system returns it first):
        # _forget_grader_modules keeps the grader's out of there.
        if top in self.allowed or top in sys.stdlib_module_names:
            return None
        if os.path.exists(os.path.join(self.workdir, top + ".py")):
            self.own_files.add(os.path.join(self.workdir, top + ".py"))
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        if frame is not None and frame.f_code.co_filename in self.own_files:
            raise ModuleNotFoundError(f"No module named '{top}'", name=name)
        return None  # numpy, torch or matplotlib importing what they need


def _run_statement(code, namespace, seconds, setitimer=signal.setitimer, run=exec):
    """Run one top-level statement within ``seconds``; ("ok"|"timeout"|"error", the exception)."""
    try:
        setitimer(signal.ITIMER_REAL, seconds if seconds > 0.05 else 0.05)
        try:
            run(code, namespace)
        finally:
            setitimer(signal.ITIMER_REAL, 0)
    except _StatementTimeout:
        return "timeout", None
    except BaseException as exc:  # noqa: BLE001 - SystemExit included: the statement is skipped, the rest runs
        return "error", exc
    return "ok", None


def load_tolerantly(module, module_path, cells, seconds, budget, describe):
    """Run the cells' top-level statements one after another, as a notebook runs.

    A statement that raises, or runs past ``seconds`` (less once ``budget`` is spent), is skipped and
    recorded; the ones before and after it still run. A cell that does not parse is skipped whole,
    unless it is the whole file: then the file cannot be loaded and its SyntaxError is returned."""
    # Private copies: the statements run here may replace builtins (isinstance, len, ...) or time.monotonic.
    is_a, run, comp, monotonic = isinstance, exec, compile, time.monotonic
    Module, ImportFrom, features = ast.Module, ast.ImportFrom, __future__
    low, high, total, setitimer = min, max, sum, getattr(signal, "setitimer", None)
    whole_file = len(cells) == 1
    has_alarm = setitimer is not None
    if has_alarm:
        signal.signal(signal.SIGALRM, _on_alarm)
    namespace = module.__dict__
    skipped = []
    future_flags = 0
    start = monotonic()
    for cell in cells:
        try:
            tree = comp(cell["source"], module_path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            if is_a(exc, SyntaxError) and exc.lineno is not None:
                exc.lineno += cell["line"] - 1
            if whole_file:
                return exc, skipped
            skipped.append({"kind": "error", **describe(exc)})
            continue
        ast.increment_lineno(tree, cell["line"] - 1)
        for statement in tree.body:
            code = comp(Module([statement], type_ignores=[]), module_path, "exec", future_flags, dont_inherit=True)
            if is_a(statement, ImportFrom) and statement.module == "__future__":
                # what a whole file compiled at once would apply to every later statement
                future_flags |= total(getattr(features, a.name).compiler_flag for a in statement.names
                                      if hasattr(features, a.name))
            left = high(budget - (monotonic() - start), 0.2)
            if has_alarm:
                outcome, exc = _run_statement(code, namespace, low(seconds, left), setitimer, run)
            else:
                try:
                    run(code, namespace)
                    outcome, exc = "ok", None
                except BaseException as error:  # noqa: BLE001 - as above
                    outcome, exc = "error", error
            if outcome == "timeout":
                skipped.append({"kind": "timeout", "line": statement.lineno, "seconds": low(seconds, left)})
            elif outcome == "error":
                skipped.append({"kind": "error", **describe(exc), "line": statement.lineno})
    return None, skipped[:50]


# ------------------------------------------------------------------------------------- one submission
def _prepare_harness(config):
    """The driver's entry points for question 2 (``grader/module/harness.py``'s source), run before the
    submission is imported. Nothing of the reference comes with it: attribution asks the grader for a
    helper's value (``helpers`` in a call), it never runs the reference here."""
    if not config.get("harness"):
        return None
    harness = {"__name__": "_grader_harness"}
    exec(compile(config["harness"], "harness.py", "exec"), harness)
    return harness


def _forget_grader_modules():
    """No module of the grader's in ``sys.modules`` when the submission is imported (none is put there; this
    holds it if one ever were): only the standard library, the allowed packages and this runner remain."""
    for name in [n for n in sys.modules if n.partition(".")[0] in _BLOCKED or n.startswith("_grader")]:
        del sys.modules[name]


def _bind_harness(harness, module):
    """The entry points, reachable by name as the submission's functions are; a submission that broke what
    this needs loses the entry points (its module checks fail), never the child."""
    if harness is None:
        return
    try:
        harness["student"] = module
        for name, function in harness["EXPORTS"].items():
            module.__dict__[name] = function
    except BaseException:  # noqa: BLE001 - e.g. a module object whose __dict__ the submission replaced
        pass


def _become_r(token, config, in_fd, out_fd):
    """An R hand-in: this process becomes R running ``r_runner.R`` (its source came in the config), which
    reads the requests on fd 0 and writes the answers on fd 3, on the same wire. Nothing of the student's
    has run yet; the limits, namespaces and memory cgroup already apply and stay with the new program."""
    r = config.pop("r")
    runner, settings = os.path.abspath(".grader_runner.R"), os.path.abspath(".grader_config.json")
    with open(runner, "w", encoding="utf-8") as f:
        f.write(config.pop("r_runner"))
    with open(settings, "w", encoding="utf-8") as f:
        json.dump({**config, "token": token.hex()}, f)
    requests, answers = os.dup(in_fd), os.dup(out_fd)  # first out of the way of 0 and 3
    os.dup2(requests, 0)
    os.dup2(answers, 3)
    env = {**r["env"], "HOME": os.getcwd(), "TMPDIR": os.getcwd()}
    os.execve(r["exec"], ["R", "--vanilla", "--no-echo", "-f", runner, "--args", settings], env)


def serve_submission(in_fd, out_fd):
    """Import the student's module (sent in the first frame) and answer calls until the pipe closes."""
    token, config, source = _read_frame(in_fd)
    if config.get("language") == "r":
        _become_r(token, config, in_fd, out_fd)

    # Keep private copies of everything used after the student's module is imported, so that
    # monkeypatching builtins, json or numpy there can at worst break this child (failing checks),
    # never change what the numbers say.
    read_exact, write_all, pack, dumps, loads = _read_exact, _write_all, FRAME_HEAD.pack, json.dumps, json.loads
    fmt_exc, extract_tb = traceback.format_exception_only, traceback.extract_tb
    real_builtins = dict(builtins.__dict__)
    restore_builtins = builtins.__dict__.update

    def send(header, blob=b""):
        restore_builtins(real_builtins)
        for stream in (sys.stdout, sys.stderr):  # so that the student's prints show up in order
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a replaced or closed stream is the student's business
                pass
        data = dumps(header).encode()
        write_all(out_fd, pack(token, len(data), len(blob)) + data + blob)

    sys.meta_path.insert(0, _BlockGraderPackages())
    sys.path[:] = [p for p in sys.path if p] + [p for p in config["site_dirs"] if p not in sys.path]
    import numpy as np

    asarray, float64 = np.asarray, np.float64
    encode, decode, array_of = encode_values, decode_values, array_from
    unpack, head_size = FRAME_HEAD.unpack, FRAME_HEAD.size
    max_entries = int(config["max_entries"])
    module_path = os.path.abspath("student.py")
    with open(module_path, "wb") as f:
        f.write(source)
    cells = config.get("cells") or [{"source": source.decode("utf-8", "replace"), "line": 1, "cell": None}]
    own_files = {module_path, "<cell>"}
    for name, text in config.get("helpers", []):  # the student's helper modules, importable by name
        helper = os.path.abspath(f"{name}.py")
        with open(helper, "w", encoding="utf-8") as f:
            f.write(text)
        own_files.add(helper)
    sys.path.append(os.getcwd())
    sys.meta_path.insert(1, _AllowedImports(config.get("imports", ("numpy", "torch")), own_files, os.getcwd()))
    _install_jupyter_stubs()
    real_builtins = dict(builtins.__dict__)  # taken again: the stubs are part of what every call restores

    def helper(call_id, name):
        """What the submission's module holds under ``name`` during a call that names it among its helpers:
        the grader computes the value outside and answers; a refusal raises here, in the submission's call."""
        def ask_the_grader(*args, **kwargs):
            enc_args, enc_kwargs, blob = encode(args, kwargs, np)
            send({"id": call_id, "helper": name, "args": enc_args, "kwargs": enc_kwargs}, blob)
            _, header_len, blob_len = unpack(read_exact(in_fd, head_size))
            answer = loads(read_exact(in_fd, header_len))
            data = read_exact(in_fd, blob_len)
            if answer.get("ok") is True:
                return array_of(answer["shape"], data, 0, np, [max_entries])
            raise ValueError(f"{name}: {answer.get('error', '')}")

        ask_the_grader.__name__ = ask_the_grader.__qualname__ = name
        return ask_the_grader

    def describe(exc):
        """The student-facing one-line error and the last line of the submission it went through."""
        restore_builtins(real_builtins)
        where = None
        if isinstance(exc, SyntaxError):
            line = f"{type(exc).__name__}: {exc.msg}"
            where = exc.lineno
        else:
            line = " ".join("".join(fmt_exc(type(exc), exc)).split())[-600:]
            for frame in extract_tb(exc.__traceback__):
                if frame.filename == module_path:
                    where = frame.lineno
        return {"error": line, "error_type": type(exc).__name__, "line": where}

    harness = _prepare_harness(config)  # before the submission runs, so that nothing it patches is used here
    _forget_grader_modules()
    spec = importlib.util.spec_from_file_location("student", module_path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update({"__file__": module_path, "__builtins__": builtins})
    sys.modules["student"] = module
    try:
        failed, skipped = load_tolerantly(module, module_path, cells, float(config.get("statement_seconds", 1e9)),
                                          float(config.get("load_seconds", 1e9)), describe)
    except BaseException as exc:  # noqa: BLE001 - anything at import is the student's error to read
        failed, skipped = exc, []
    if failed is not None:
        send({"ready": False, **describe(failed)})
        return
    names = [n for n in config["functions"] if callable(getattr(module, n, None))]
    restore_builtins(real_builtins)
    _bind_harness(harness, module)
    send({"ready": True, "functions": names, "skipped": skipped})

    while True:
        try:
            _, header_len, blob_len = FRAME_HEAD.unpack(read_exact(in_fd, FRAME_HEAD.size))
        except EOFError:
            return
        restore_builtins(real_builtins)
        request = loads(read_exact(in_fd, header_len))
        blob = read_exact(in_fd, blob_len)
        call_id = request["id"]
        stage, dtype = "call", ""
        stand_ins = {name: module.__dict__.get(name, _ABSENT) for name in request.get("helpers", ())}
        try:
            func = getattr(module, request["function"])
            args, kwargs = decode(request["args"], request["kwargs"], blob, np, len(blob) // 8)  # all it holds
            for name in stand_ins:
                module.__dict__[name] = helper(call_id, name)
            try:
                value = func(*args, **kwargs)
            finally:
                for name, own in stand_ins.items():
                    if own is _ABSENT:
                        module.__dict__.pop(name, None)
                    else:
                        module.__dict__[name] = own
            stage = "convert"
            dtype = str(getattr(value, "dtype", type(value).__name__))[:40]
            if hasattr(value, "detach"):  # a torch tensor: leave autograd and the GPU behind
                value = value.detach().cpu()
            array = asarray(value, dtype=float64, order="C")  # a scalar stays 0-D: checks.py names it so
            if array.size > max_entries:
                send({"id": call_id, "ok": False, "too_big": int(array.size)})
                continue
            send({"id": call_id, "ok": True, "shape": [int(s) for s in array.shape], "dtype": dtype}, array.tobytes())
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
            try:
                send({"id": call_id, "ok": False, "stage": stage, "dtype": dtype, **describe(exc)})
            except BaseException:  # noqa: BLE001 - the student broke json or the pipe: the parent sees a crash
                os._exit(3)


def main():
    mode = sys.argv[1]
    if mode == "serve":
        ctl_fd = int(sys.argv[2])
        site_dirs = json.loads(os.environ.get("GRADER_SITE_DIRS", "[]"))
        preload = [p for p in os.environ.get("GRADER_PRELOAD", "").split(",") if p]
        serve(ctl_fd, site_dirs, preload)
    else:  # trusted and uid modes: one plain child process per submission, no namespaces
        _first_to_die()
        _own_session_keyring()
        serve_submission(int(sys.argv[2]), int(sys.argv[3]))


if __name__ == "__main__":
    main()
