"""mha.machine.flush_denormals and denormals(): subnormal floats flushed on every CPU thread, or on none.

Each case runs in a fresh Python process, because what it tests is whether PyTorch's thread pool exists yet:
the flags are per thread and a new thread copies its creator's. The check inside each child is independent
of the probe the code uses: exp(-95) = 5.5e-42 is subnormal in float32, computed by a vectorised kernel
split across the intra-op threads.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, sys
import torch
from mha import machine
torch.set_num_threads(2)  # two threads whatever the machine's cores: each probe has a share on each
if sys.argv[1] == "pool-first":
    torch.randn(1 << 20).mul_(2.0)  # a parallel operation: the thread pool now exists, without the flags
flushed = None if sys.argv[1] == "late-flag" else machine.flush_denormals()
if sys.argv[1] == "late-flag":
    torch.randn(1 << 20).mul_(2.0)
    torch.set_flush_denormal(True)  # the main thread only: the pool's threads keep IEEE arithmetic
tiny = torch.exp(torch.full((1 << 20,), -95.0))  # (2^20,), 5.5e-42 each where kept
print(json.dumps({"flushed": flushed, "mode": machine.denormals(), "zeros": int((tiny == 0).sum()),
                  "n": tiny.numel()}))
"""


def child(case: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, case], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_flushing_first_thing_in_a_process_reaches_every_thread():
    from mha.machine import DENORMALS_FLUSHED

    seen = child("first")
    assert seen["flushed"] is True and seen["mode"] == DENORMALS_FLUSHED
    assert seen["zeros"] == seen["n"]  # every thread's share of the exp flushed to zero


def test_after_the_thread_pool_started_nothing_is_flushed_not_just_the_main_thread():
    from mha.machine import DENORMALS_KEPT

    seen = child("pool-first")
    assert seen["flushed"] is False and seen["mode"] == DENORMALS_KEPT
    assert seen["zeros"] == 0  # IEEE everywhere: no result depends on which thread computed it


def test_a_flag_set_on_the_main_thread_alone_is_reported_as_mixed():
    from mha.machine import DENORMALS_MIXED

    seen = child("late-flag")
    assert seen["mode"] == DENORMALS_MIXED
    assert 0 < seen["zeros"] < seen["n"]  # the main thread's share flushed, the other thread's kept
