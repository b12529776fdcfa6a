"""A running submission as a launcher hands it over (grader/sandbox/child.py): its end, its exit code, its
per-process limits."""

import os
import signal

from grader.sandbox.child import Child, exit_code, rlimits
from grader.sandbox.limits import MEMORY_KILLED, Limits


def test_ending_a_child_stops_its_tree_with_the_grace_given_closes_our_pipe_ends_and_says_how_it_ended():
    pipes = [os.pipe() for _ in range(4)]
    asked = []

    def stop_tree(grace: float) -> int | None:
        asked.append(grace)
        return -signal.SIGKILL

    ours = [pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0]]
    child = Child(*ours, stop_tree)
    assert child.end(1.5) == -signal.SIGKILL and asked == [1.5]
    for fd in ours:
        try:
            os.fstat(fd)
        except OSError:
            continue
        raise AssertionError(f"fd {fd} is still open")
    for fd in (pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1]):
        os.close(fd)


def test_a_tree_killed_by_the_kernel_for_memory_reports_memory_killed_and_any_other_end_its_own_code():
    assert exit_code(-signal.SIGKILL, True) == MEMORY_KILLED
    assert exit_code(None, True) == MEMORY_KILLED  # the server could not say: the group could
    assert exit_code(-signal.SIGKILL, False) == -signal.SIGKILL
    assert exit_code(1, True) == 1  # it exited on its own: the kill was of another of its processes
    assert exit_code(-signal.SIGSEGV, True) == -signal.SIGSEGV


def test_each_process_of_a_submission_gets_the_limits_memory_cpu_file_and_process_caps():
    limits = Limits(submission_seconds=42, memory_bytes=1 << 30, processes=3, file_bytes=1 << 20)
    assert rlimits(limits) == {"RLIMIT_AS": 1 << 30, "RLIMIT_CPU": 42, "RLIMIT_FSIZE": 1 << 20, "RLIMIT_CORE": 0,
                               "RLIMIT_NPROC": 3, "RLIMIT_NOFILE": 256}
