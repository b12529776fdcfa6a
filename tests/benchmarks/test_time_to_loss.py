"""benchmarks/time_to_loss.py on a tiny model: the recipes race to their targets, each evaluated on the model it
keeps, and the report compares them with the params.yaml recipe."""

from __future__ import annotations

import copy
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from mha import train

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "time_to_loss.py"
RECIPE_NAMES = ("params.yaml", "former", "nanoGPT")


def load_benchmark():
    spec = importlib.util.spec_from_file_location("time_to_loss", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def tiny_params() -> dict:
    params = copy.deepcopy(yaml.safe_load((REPO / "params.yaml").read_text()))
    params["model"].update(n_layer=1, n_head=2, n_embd=16, block_size=16)
    params["train"].update(batch_size=8, max_iters=120, warmup_iters=10, eval_iters=2, threads=1)
    return params


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "corpus.txt"
    path.write_text("ROMEO:\nBut soft, what light through yonder window breaks?\n\n" * 400)
    return path


def test_each_recipe_is_evaluated_on_the_model_it_keeps(corpus_file):
    ttl = load_benchmark()
    params = tiny_params()
    corpus = train.Corpus.load(corpus_file, ttl.recipe_config(params, {}).data)
    runs = {name: ttl.build(name, ttl.recipe_config(params, overrides), corpus, torch.device("cpu"))
            for name, overrides in ttl.RECIPES.items()}
    assert runs[ttl.REFERENCE].trainer.average is not None  # params.yaml's recipe keeps the weights' average
    assert runs["former"].trainer.average is None and runs["nanoGPT"].trainer.average is None
    reference = runs[ttl.REFERENCE]
    for _ in range(30):
        reference.trainer.train_step()
    ttl.evaluate(reference, [1.0])
    kept = train.evaluate(reference.trainer.average.module, reference.batches, torch.device("cpu"))
    trained = train.evaluate(reference.trainer.model, reference.batches, torch.device("cpu"))
    assert kept != trained and reference.curve[-1][2] == kept


def test_the_benchmark_reports_every_recipe_against_the_params_yaml_one(corpus_file, tmp_path):
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(tiny_params()))
    env = {**os.environ, "MHA_DATA_MIRROR": str(corpus_file)}
    done = subprocess.run([sys.executable, str(SCRIPT), "--params", str(params_file), "--targets", "3.2", "3.0",
                           "--eval-every", "10", "--cap", "2", "--device", "cpu"], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "params.yaml: muon" in out and "weights averaged with decay" in out
    assert "former: adamw" in out and out.count("no average") == 2
    rows = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert set(RECIPE_NAMES) <= rows  # a row for each recipe and target
    assert "best validation loss by" in out
    assert "the former recipe's training time" in out or "the former recipe did not reach 3.00" in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for a machine without a GPU")
def test_device_cuda_without_a_gpu_is_refused_in_one_line(corpus_file, tmp_path):
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(tiny_params()))
    env = {**os.environ, "MHA_DATA_MIRROR": str(corpus_file)}
    done = subprocess.run([sys.executable, str(SCRIPT), "--params", str(params_file), "--device", "cuda"],
                          capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == "time_to_loss: train.device is 'cuda' but PyTorch sees no CUDA device here; use cpu or auto\n"
