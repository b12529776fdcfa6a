"""Hostile: memory outside every address space: memfd files, POSIX shared memory and /tmp, written (not
mapped), in three processes, 3 GiB in all; without a memory cgroup the kernel's OOM killer picked the
warm server or the grader. Implements nothing: expected 0."""
import os
import time

CHUNK = b"\1" * (1 << 20)


def fill(make, count):
    for i in range(count):
        try:
            fd = make(i)
            for _ in range(15):  # under the per-file size limit, 15 MiB a file
                os.write(fd, CHUNK)
        except OSError:
            return


for target in ("memfd", "/dev/shm", "/tmp"):
    if os.fork() == 0:
        if target == "memfd":
            fill(lambda i: os.memfd_create(f"bomb{i}"), 70)
        else:
            fill(lambda i, t=target: os.open(f"{t}/bomb-{MARK}-{os.getpid()}-{i}", os.O_CREAT | os.O_RDWR), 70)
        time.sleep(30)
        os._exit(0)
time.sleep(30)
