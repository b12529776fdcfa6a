"""Hostile: leaves what outlives a process for a later student to read: System V shared memory, a
message queue and a semaphore set, kernel keys in its user and session keyrings, and a file in every
folder it can name and write to. Implements nothing: expected 0."""
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
for i in range(3):
    key = 0x4D480000 + i
    libc.shmget(key, 1 << 20, IPC_CREAT | 0o666)
    libc.msgget(key, IPC_CREAT | 0o666)
    libc.semget(key, 1, IPC_CREAT | 0o666)
keyctl = {"x86_64": 248, "aarch64": 217}.get(os.uname().machine)  # add_key
if keyctl is not None:
    for ring in (-4, -3):  # @u, @s
        libc.syscall(keyctl, b"user", MARK.encode(), b"left for the next student", 25, ring)
import numpy

folders = ["/", "/tmp", "/var/tmp", "/dev", "/dev/shm", "/dev/mqueue", "/sandbox", "/sandbox/site", os.getcwd(),
           os.path.expanduser("~"), os.path.dirname(os.__file__), os.path.dirname(os.path.dirname(numpy.__file__)),
           OUT, SUBMISSIONS]
for folder in folders:
    try:
        with open(os.path.join(folder, f"left-{MARK}"), "x") as f:
            f.write("left for the next student")
    except OSError:
        pass
