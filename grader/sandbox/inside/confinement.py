"""What confines one submission's process tree inside the sandbox: namespaces, mounts, capabilities, limits.

Used by the fork server (``server.py``) between the fork and the submission's first line, and by the trusted
and uid modes (``__main__.py``) for what they can have without namespaces. Standard library only (``ctypes``
for the system calls Python does not wrap).
"""

import ctypes
import os
import signal

try:
    import resource
except ImportError:  # Windows: the trusted mode runs without resource limits (the grader says so)
    resource = None

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 1, 38, 4
INSIDE_ID = 1000  # the uid and gid a submission has inside its namespaces (never 0)
_libc = ctypes.CDLL(None, use_errno=True) if os.name == "posix" else None  # Windows: the trusted mode only


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write_file(path, text):
    with open(path, "w") as f:
        f.write(text)


def enter_namespaces():
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


def private_view(tmp_bytes):
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


def drop_privileges(limits):
    """No capabilities, no way to gain any, and the resource limits of the whole submission."""
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()  # _LINUX_CAPABILITY_VERSION_3: all empty
    _check(_libc.capset(ctypes.byref(header), data), "capset")
    for name, value in limits.items():
        which = getattr(resource, name)
        resource.setrlimit(which, (value, value))


def first_to_die():
    """oom_score_adj 1000, inherited by every process the submission starts: under memory pressure the
    kernel kills a submission before the server or the grader. Written while this process is still
    dumpable (a non-dumpable one's /proc files belong to root) and before any namespace."""
    try:
        _write_file("/proc/self/oom_score_adj", "1000")
    except OSError:
        pass


def meet_the_grader(sock):
    """Say hello on the grader's socket (the kernel attaches this process's pid as the grader sees it) and
    wait until it has put this process in the submission's memory cgroup: every process forked after
    this one is counted there."""
    sock.sendall(b"hello")
    if sock.recv(16) != b"go":
        raise RuntimeError("the grader did not place this submission")
    sock.close()


def own_session_keyring():
    """A new, empty session keyring: a key the submission adds there dies with its processes, and the
    grader's own session keyring (which a child would otherwise share, and could write to) stays out of
    reach. KEYCTL_JOIN_SESSION_KEYRING with no name."""
    machine = os.uname().machine if _libc is not None else ""  # Windows has no kernel keys
    number = {"x86_64": 250, "aarch64": 219}.get(machine)  # the keyctl system call
    if number is not None:
        _libc.syscall(number, 1, None)


def guard_init():
    """The namespace's init: killed with its reaper outside (SIGKILL when the parent dies), and not dumpable (no
    other process of the submission's uid may ptrace it or read its /proc files)."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")
