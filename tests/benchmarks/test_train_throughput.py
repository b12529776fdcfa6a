"""benchmarks/train_throughput.py on a CPU: the pipeline's own step timed in ms per step (--recipe), and
--device cuda on a machine without a GPU saying so in one line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "train_throughput.py"


def test_recipe_reports_the_pipeline_s_eager_step_in_ms_per_step():
    done = subprocess.run([sys.executable, str(SCRIPT), "--recipe", "--rounds", "1", "--steps", "1", "--threads", "1"],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "the pipeline's step on cpu (1 threads), params.yaml's recipe" in done.stdout
    eager = re.search(r"^  eager +(\d+\.\d\d) ms/step", done.stdout, re.M)
    assert eager and float(eager.group(1)) > 0
    assert "ratio mha.model.GPT / nn.TransformerEncoderLayer" in done.stdout  # the comparison still follows


@pytest.mark.skipif(torch.cuda.is_available(), reason="the message is for a machine without a GPU")
def test_device_cuda_without_a_gpu_says_so_in_one_line():
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cuda"], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0 and done.stdout.count("\n") == 1
    assert "PyTorch sees no CUDA device on this machine; nothing measured" in done.stdout
