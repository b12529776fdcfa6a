"""The warm server inside the sandbox: numpy (and torch) imported once, then one isolated fork per submission.

The server receives four pipe ends (and the grader's placement socket) over its control socket for each
submission and forks. The fork enters a new user, mount, pid, IPC and network namespace (nested inside
bubblewrap's), so a submission sees none of the server's or the other submissions' processes, and cannot
reach another submission graded at the same time; its first process is pid 1 there, killed by the kernel
with every process it started when the server kills the fork. It gets a fresh ``/proc`` (or none), a private
size-capped ``/tmp``, its resource limits, no capabilities (``confinement.py``), and only then imports the
student's file (``serving.py``).

The control socket carries JSON: ``{"op": "spawn", ...config}`` with the pipe ends attached, answered by
``{"pid": PID}``; ``{"op": "kill", "pid": PID, "grace": SECONDS}``, answered by ``{"status": CODE | null}``.
"""

import json
import os
import signal
import socket
import sys
import time
import traceback

from . import confinement, serving

CONTROL_BYTES = 1 << 16  # the largest control message


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
    confinement.first_to_die()
    if len(fds) > 4:
        confinement.meet_the_grader(socket.socket(fileno=fds[4]))
    confinement.own_session_keyring()
    # A session and process group of its own: a process group reaches across pid namespaces, so
    # killpg(0, ...) must find only this submission's processes, never the server or another's.
    os.setsid()
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    confinement.enter_namespaces()
    init = os.fork()
    if init:  # the reaper, in the server's pid namespace: killing it ends the whole submission
        _close_all_but_devnull((req_r, resp_w, out_w, err_w))
        _, status = os.waitpid(init, 0)
        _exit_like(status)
    confinement.guard_init()
    confinement.private_view(int(config["tmp_bytes"]))
    os.makedirs("/tmp/work", mode=0o700)
    student = os.fork()
    if student == 0:
        os.chdir("/tmp/work")
        confinement.drop_privileges(config["rlimits"])
        os.close(out_w)
        os.close(err_w)
        serving.serve_submission(req_r, resp_w)
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
