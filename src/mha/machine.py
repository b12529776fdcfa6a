"""Where a run happens: the versions of the packages that shape its numbers, the CPU and the host; how its memory
is kept, and how its CPU threads treat subnormal floats.

The training stage records the versions and the denormals setting in its run record (models/<stage>.json),
and the report shows them from there, so they describe the run that trained, not the one that rendered the page;
the CPU and host, which differ between machines that give the same numbers, go only into its run log
(mha.artifacts.runlog).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

import mha


def package_version(name: str) -> str | None:
    """The installed distribution's version, or None when it is not installed (e.g. dvc outside the venv)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
            "mha": mha.__version__, "dvc": package_version("dvc")}


def cpu_model() -> str | None:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform reports, else None."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def host() -> str:
    """This machine's network name, as a run log names where it ran."""
    return platform.node() or "unknown"


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc's ceiling for M_MMAP_THRESHOLD on 64-bit


def keep_freed_memory() -> bool:
    """Let glibc reuse freed blocks up to 32 MiB instead of returning them to the kernel.

    PyTorch's CPU tensors come straight from malloc. A training step frees and re-allocates the same
    (B·T, 4·C) buffers (8 MiB at B=32, T=128, C=128) every step; above glibc's default 128 KiB
    threshold each one is a fresh mmap, and touching it page-faults 2,048 pages. Kept in the heap,
    they are reused: GELU forward and backward (~80% page faults before) drop from ~5 ms to ~2 ms.
    The numbers computed are unchanged. Returns False where there is no glibc (nothing is changed).
    """
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    # the trim threshold first: setting either one also turns off glibc's dynamic adjustment
    return bool(mallopt(_M_TRIM_THRESHOLD, ctypes.c_int(2**31 - 1)) and mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX))


# How the CPU threads of a process treat subnormal floats (|x| < 1.2e-38 in float32), as run records name it.
DENORMALS_FLUSHED = "flushed"  # every thread flushes them to zero (FTZ) and reads them as zero (DAZ)
DENORMALS_KEPT = "kept"  # IEEE arithmetic on every thread (the default)
DENORMALS_MIXED = "mixed"  # some threads flush, others do not: the flag was set after the threads started


def denormals() -> str:
    """How this process's CPU threads treat subnormal floats now: probed on every thread, not assumed.

    x86 keeps the FTZ and DAZ flags per thread, so the main thread's setting says nothing about PyTorch's
    intra-op threads. The probe makes subnormal results on all of them: an element-wise multiply and a
    matrix product (MKL), each split across the threads; a thread that flushes leaves zeros in its share.
    """
    tiny = torch.full((1 << 20,), 1e-30).mul_(1e-10)  # (2^20,): 1e-40 each, subnormal; > one thread's grain
    # each product 1e-22 · 1e-22 = 1e-44 is subnormal, and so is their sum of 16
    product = torch.full((2048, 16), 1e-22) @ torch.full((16, 2048), 1e-22)  # (2048, 2048)
    nonzero = [(int(t.count_nonzero()), t.numel()) for t in (tiny, product)]
    if all(n == 0 for n, _ in nonzero):
        return DENORMALS_FLUSHED
    return DENORMALS_KEPT if all(n == size for n, size in nonzero) else DENORMALS_MIXED


def flush_denormals() -> bool:
    """Flush subnormal floats to zero on every CPU thread of this process; call it before any torch work.

    Training whose softmax saturates (attention without the 1/√d_k scale: weights of 1e-40, gradients as
    small) spends most of a CPU step on subnormal arithmetic, which x86 does in microcode: the lab's
    no_scale step took 2.1x as long on one thread (benchmarks/denormals.py measures it). Flushed, those
    values are zero, which is what they round to in any loss this project reports.

    The flags are per thread, and a thread starts with its creator's: set on the main thread before PyTorch
    starts its thread pool (its first parallel operation), every pool thread has them. Later, only the main
    thread would, and results would depend on which thread computed what; so then this turns flushing off
    again and returns False. Returns True when every thread flushes (`denormals()` probes them).
    """
    if not torch.set_flush_denormal(True):  # a CPU without the flags (not x86 with SSE3)
        return False
    if denormals() == DENORMALS_FLUSHED:
        return True
    torch.set_flush_denormal(False)
    return False
