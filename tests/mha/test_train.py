"""The training loop on a tiny model: outputs per the contract, determinism, resume after kill -9, bad params;
the machine's figures in the run log only."""

import copy
import dataclasses
import importlib.metadata
import io
import json
import math
import os
import random
import signal
import subprocess
import sys
from dataclasses import asdict
from itertools import pairwise
from pathlib import Path

import pytest
import torch
import yaml

from mha import checkpoint, machine, schema, train
from mha.artifacts import run as artifacts
from mha.artifacts.attention import ATTENTION_MAPS
from mha.artifacts.layout import RunFiles
from mha.artifacts.runlog import RUN_LOG
from mha.data import split_text
from mha.model import GPT
from mha.schema import DataConfig
from mha.training.average import EMA_WARMUP, ema_decay, weight_average
from mha.training.optimizers import build_optimizers
from mha.training.schedule import lr_at, lr_scale
from mha.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[2]

# params.yaml with a tiny model and schedule: every section, as the stage scripts require.
TINY = copy.deepcopy(yaml.safe_load((REPO / "params.yaml").read_text()))
TINY["model"].update(n_layer=1, n_head=2, n_embd=16, block_size=16, dropout=0.0, scale_scores=True,
                     positions="learned")
TINY["train"].update(batch_size=8, max_iters=40, optimizer="muon", lr=0.01, muon_lr=0.02, warmup_iters=5,
                     min_lr=0.001, weight_decay=0.1, grad_clip=1.0, eval_interval=10, eval_iters=2, seed=7, threads=1,
                     device="cpu", sample_chars=50, sample_prompt="ROMEO:\n", checkpoint_interval=10,
                     precision="fp32", compile=False, cuda_graph=False)
TINY["data"].update(val_fraction=0.1)


def make_corpus(path: Path, chars: int = 20_000) -> Path:
    """A structured text (speakers, words, lines), so that a tiny model has something to learn."""
    rng = random.Random(0)
    words = "the and to of my thou that is not with me it be his your king lord love".split()
    lines = []
    while sum(map(len, lines)) < chars:
        lines.append(rng.choice(["ROMEO:", "JULIET:", "KING:"]))
        lines.extend(" ".join(rng.choice(words) for _ in range(rng.randint(3, 9))).capitalize() + "." for _ in range(2))
        lines.append("")
    path.write_text("\n".join(lines))
    return path


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("data") / "corpus.txt")


def outputs(directory: Path, attention: bool = True) -> RunFiles:
    return RunFiles(
        metrics=directory / "metrics.json", plot=directory / "plot.csv", model=directory / "model.pt",
        record=directory / "model.json", sample=directory / "sample.txt",
        attention=directory / "attention.json" if attention else None, run_log=directory / "run_log.json",
    )


def run(params: dict, corpus_path: Path, directory: Path, attention: bool = True, log=None) -> dict:
    """The run's results, as the run record's results section holds them."""
    resolved = schema.resolve(params, attention=attention)
    corpus = train.Corpus.load(corpus_path, resolved.data)
    threads = torch.get_num_threads()
    try:
        trained = train.train(resolved, corpus, outputs(directory, attention), train.setup(resolved.train),
                              progress=False, log=log or (lambda line: None))
        return asdict(trained.results)
    finally:
        torch.set_num_threads(threads)  # train.threads is process-wide; leave other tests their threads


@pytest.fixture(scope="module")
def reference_run(corpus_path, tmp_path_factory):
    directory = tmp_path_factory.mktemp("reference")
    return run(TINY, corpus_path, directory), directory


def test_outputs_follow_the_contract(reference_run, corpus_path):
    metrics, directory = reference_run
    record, results = artifacts.read_finished_run(directory / "model.json", "train")
    assert asdict(results) == metrics
    # the metrics file is the summary `dvc metrics show` prints; the run record holds every result
    assert json.loads((directory / "metrics.json").read_text()) == {k: metrics[k] for k in artifacts.SUMMARY_KEYS}
    assert metrics["iterations"] == 40 and metrics["tokens_seen"] == 40 * 8 * 16
    curve = artifacts.read_curve(directory / "plot.csv", "train")
    assert curve.step == [0, 10, 20, 30, 40]
    assert [row.tokens for row in curve.rows] == [s * 8 * 16 for s in (0, 10, 20, 30, 40)]
    vocab = len(set(corpus_path.read_text()))
    assert abs(curve.val_loss[0] - math.log(vocab)) < 0.2  # untrained: a uniform guess
    assert curve.val_loss[-1] < curve.val_loss[0] - 0.5  # and it learned something
    assert metrics["best_val_loss"] == pytest.approx(min(curve.val_loss), abs=1e-6)  # the CSV keeps 6 decimals
    assert metrics["final_val_loss"] == pytest.approx(curve.val_loss[-1], abs=1e-6)

    assert record.model["n_embd"] == 16 and record.model["vocab_size"] == vocab
    assert record.train == TINY["train"]  # precision and compile among them
    assert record.device == "cpu" and record.attention_kernel == "explicit"
    corpus = train.Corpus.load(corpus_path, DataConfig(val_fraction=0.1))
    assert record.data.sha256 == corpus.sha256
    assert (record.data.train_chars, record.data.val_chars) == (len(corpus.train), len(corpus.val))
    assert record.versions["torch"] == torch.__version__ and record.parameters == metrics["parameters"]
    # what it ran with, for the report's run facts: the DVC of this venv; nothing of the machine (the run log's)
    assert record.versions["dvc"] == importlib.metadata.version("dvc")
    assert record.denormals == machine.denormals()  # probed as it trained: this process's threads, as they are
    outputs_text = "".join(p.read_text() for p in directory.iterdir() if p.suffix in (".json", ".csv", ".txt")
                           and p.name != "run_log.json")
    assert machine.cpu_model() not in outputs_text and machine.host() not in outputs_text

    log = RUN_LOG.read(directory / "run_log.json")  # the machine's figures: wall time, speed, CPU, host, dates
    assert log.finished and log.step == 40 and log.wall_seconds > 0
    assert log.tokens_per_second == pytest.approx(40 * 8 * 16 / log.wall_seconds, rel=0.01)  # wall to the ms
    assert (log.cpu, log.host) == (machine.cpu_model(), machine.host()) and log.started <= log.written
    assert log.fingerprint == checkpoint.fingerprint(asdict(record))

    saved = torch.load(directory / "model.pt", weights_only=False)
    assert saved["step"] == 40 and saved["vocab"] == "".join(sorted(set(corpus_path.read_text())))
    assert set(saved) == {"record", "vocab", "model", "optimizer", "step", "history", "rng", "average"}  # record once
    assert int(saved["average"]["n_averaged"]) == 40  # the weights' average (train.ema), for a resumed run to go on
    assert saved["record"]["model"] == asdict(record)["model"]

    sample = artifacts.read_sample(directory / "sample.txt", "train")
    assert sample.startswith("ROMEO:\n") and len(sample) == len("ROMEO:\n") + 50

    heat = ATTENTION_MAPS.read(directory / "attention.json")
    T = 16  # the excerpt is 64 characters, or block_size when that is shorter
    assert len(heat.tokens) == T
    assert heat.excerpt in split_text(corpus_path.read_text(), 0.1)[1]  # from the validation split
    assert (heat.n_layer, heat.n_head) == (1, 2)
    for row in heat.weights[0][1]:
        assert abs(sum(row) - 1.0) < 1e-6


def test_the_attention_heat_map_covers_64_characters_when_the_block_allows(corpus_path, tmp_path):
    params = copy.deepcopy(TINY)
    params["model"]["block_size"] = 64
    params["train"].update(max_iters=2, eval_interval=2)
    run(params, corpus_path, tmp_path)
    heat = json.loads((tmp_path / "attention.json").read_text())
    assert len(heat["tokens"]) == 64 and len(heat["weights"][0][0]) == 64 and len(heat["weights"][0][0][63]) == 64


def test_same_params_give_identical_numbers(reference_run, corpus_path, tmp_path):
    metrics, directory = reference_run
    again = run(TINY, corpus_path, tmp_path)
    assert again == metrics
    # every output byte for byte, the checkpoint too: only the run log holds the clock and the machine
    for name in ("metrics.json", "plot.csv", "model.json", "model.pt", "sample.txt", "attention.json"):
        assert (tmp_path / name).read_bytes() == (directory / name).read_bytes(), name
    assert (tmp_path / "run_log.json").read_bytes() != (directory / "run_log.json").read_bytes()


def test_a_different_seed_gives_different_numbers(reference_run, corpus_path, tmp_path):
    params = copy.deepcopy(TINY)
    params["train"]["seed"] = 8
    assert run(params, corpus_path, tmp_path)["final_val_loss"] != reference_run[0]["final_val_loss"]


def test_the_no_attention_model_writes_no_heat_map_and_has_fewer_parameters(reference_run, corpus_path, tmp_path):
    metrics = run(TINY, corpus_path, tmp_path, attention=False)
    assert metrics["parameters"] < reference_run[0]["parameters"]
    assert not (tmp_path / "attention.json").exists()
    assert json.loads((tmp_path / "model.json").read_text())["model"]["attention"] is False


def stage_command(params_file: Path, corpus: Path, directory: Path) -> list[str]:
    return [
        sys.executable, str(REPO / "pipeline" / "train.py"), "--params", str(params_file), "--attention", "on",
        "--data", str(corpus), "--metrics", str(directory / "metrics.json"), "--plot", str(directory / "plot.csv"),
        "--model", str(directory / "model.pt"), "--config", str(directory / "model.json"),
        "--sample", str(directory / "sample.txt"), "--attention-weights", str(directory / "attention.json"),
        "--no-progress",
    ]


def test_a_run_killed_with_sigkill_resumes_and_ends_with_identical_outputs_and_its_time_counted(corpus_path,
                                                                                                 tmp_path):
    params = copy.deepcopy(TINY)
    # long enough that the kill lands mid-run: a checkpoint every 10 steps of 400
    params["train"].update(max_iters=400, eval_interval=50, checkpoint_interval=10)
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(params))
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(stage_command(params_file, corpus_path, straight), capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr

    proc = subprocess.Popen(stage_command(params_file, corpus_path, resumed), stderr=subprocess.PIPE, text=True,
                            env=env)
    for line in proc.stderr:
        if line.startswith("checkpoint: step"):
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    killed_at = torch.load(resumed / "model.pt", weights_only=False)["step"]
    assert 0 < killed_at < 400 and not (resumed / "metrics.json").exists()
    # the stage's log is beside its record here (outside the working directory; under runs/ in a checkout)
    before = RUN_LOG.read(resumed / "model.log.json")
    assert not before.finished and before.step in (killed_at, killed_at - 10)  # the kill may fall between the two

    second = subprocess.run(stage_command(params_file, corpus_path, resumed), capture_output=True, text=True, env=env,
                            timeout=120)
    assert second.returncode == 0, second.stderr
    assert f"resuming from {resumed / 'model.pt'} at step {killed_at} of 400" in second.stderr
    assert "starting fresh" not in second.stderr
    for name in ("metrics.json", "plot.csv", "model.json", "model.pt", "sample.txt", "attention.json"):
        assert (resumed / name).read_bytes() == (straight / name).read_bytes(), name
    after = RUN_LOG.read(resumed / "model.log.json")
    assert after.finished and after.step == 400
    if before.step == killed_at:  # the killed process's time is counted, from the log it left
        assert after.started == before.started and after.wall_seconds > before.wall_seconds
        assert "no run log" not in second.stderr
    else:  # its log was of the checkpoint before: not this one's time, and said so
        assert f"no run log of this run at step {killed_at}" in second.stderr
    assert f"{after.wall_seconds:.0f} s" in second.stdout and str(resumed / "model.log.json") in second.stdout


def test_a_checkpoint_with_other_params_or_data_is_not_resumed_and_says_why(reference_run, corpus_path, tmp_path):
    _, directory = reference_run
    (tmp_path / "model.pt").write_bytes((directory / "model.pt").read_bytes())
    params = copy.deepcopy(TINY)
    params["train"]["lr"] = 0.02
    lines = []
    run(params, corpus_path, tmp_path, log=lines.append)
    assert "not resuming" in lines[0] and "train.lr 0.01 -> 0.02" in lines[0] and "starting fresh" in lines[0]

    (tmp_path / "model.pt").write_bytes((directory / "model.pt").read_bytes())
    other = make_corpus(tmp_path / "other.txt", chars=21_000)
    lines.clear()
    run(TINY, other, tmp_path, log=lines.append)
    assert "not resuming" in lines[0] and "data.sha256" in lines[0]

    state = torch.load(directory / "model.pt", weights_only=False)
    state["record"]["code"]["model.py"] = "0" * 64  # a checkpoint written by another version of the model
    torch.save(state, tmp_path / "model.pt")
    lines.clear()
    run(TINY, corpus_path, tmp_path, log=lines.append)
    assert "not resuming" in lines[0] and "code.model.py changed" in lines[0]

    for key, other_value, expected in (("precision", "bf16", "train.precision 'bf16' -> 'fp32'"),
                                       ("compile", True, "train.compile True -> False"),
                                       ("optimizer", "adamw", "train.optimizer 'adamw' -> 'muon'"),
                                       ("muon_lr", 0.05, "train.muon_lr 0.05 -> 0.02")):
        state = torch.load(directory / "model.pt", weights_only=False)
        state["record"]["train"][key] = other_value  # a checkpoint made with other GPU options
        torch.save(state, tmp_path / "model.pt")
        lines.clear()
        run(TINY, corpus_path, tmp_path, log=lines.append)
        assert "not resuming" in lines[0] and expected in lines[0], lines[0]

    state = torch.load(directory / "model.pt", weights_only=False)
    flip = {machine.DENORMALS_FLUSHED: machine.DENORMALS_KEPT}
    other = flip.get(state["record"]["denormals"], machine.DENORMALS_FLUSHED)
    state["record"]["denormals"] = other  # made by a process whose threads treated subnormal floats otherwise
    torch.save(state, tmp_path / "model.pt")
    lines.clear()
    run(TINY, corpus_path, tmp_path, log=lines.append)
    assert "not resuming" in lines[0] and f"denormals {other!r} -> {machine.denormals()!r}" in lines[0], lines[0]

    (tmp_path / "model.pt").write_bytes(b"not a checkpoint")
    lines.clear()
    run(TINY, corpus_path, tmp_path, log=lines.append)
    assert "cannot read it" in lines[0] and "starting fresh" in lines[0]


def test_the_learning_rate_warms_up_linearly_then_decays_by_cosine_to_min_lr():
    cfg = schema.resolve(TINY).train
    cfg.max_iters, cfg.lr, cfg.warmup_iters, cfg.min_lr = 1000, 1e-2, 100, 1e-3
    assert lr_at(0, cfg) == pytest.approx(1e-4) and lr_at(49, cfg) == pytest.approx(5e-3)
    assert lr_at(100, cfg) == pytest.approx(1e-2)
    assert lr_at(550, cfg) == pytest.approx((1e-2 + 1e-3) / 2)
    assert lr_at(1000, cfg) == pytest.approx(1e-3)
    lrs = [lr_at(s, cfg) for s in range(100, 1000)]
    assert all(a >= b for a, b in pairwise(lrs))


def test_muon_trains_the_blocks_matrices_and_adamw_the_rest_both_on_the_schedule():
    run_config = schema.resolve(TINY)
    cfg = run_config.train
    model = GPT(run_config.for_vocab(30))
    optimizers = build_optimizers(model, cfg)
    muon, adamw = optimizers.optimizers["muon"], optimizers.optimizers["adamw"]
    names = {id(p): name for name, p in model.named_parameters()}
    in_muon = sorted(names[id(p)] for group in muon.param_groups for p in group["params"])
    in_adamw = {names[id(p)] for group in adamw.param_groups for p in group["params"]}
    assert in_muon == sorted(["blocks.0.attn.c_attn.weight", "blocks.0.attn.c_proj.weight",
                              "blocks.0.mlp.c_fc.weight", "blocks.0.mlp.c_proj.weight"])
    assert in_adamw == set(names.values()) - set(in_muon)  # every other parameter, each in one optimizer
    assert {"tok_emb.weight", "pos_emb.weight", "lm_head.weight", "lm_head.bias"} <= in_adamw
    trainer = Trainer(model=model, forward=model, optimizer=optimizers, cfg=cfg,
                           data=torch.randint(30, (500,)), block_size=16, device=torch.device("cpu"),
                           batches=torch.Generator().manual_seed(0))
    for _ in range(3):
        trainer.train_step()
    scale = lr_scale(2, cfg)  # the third step's
    assert [g["lr"] for g in muon.param_groups] == [pytest.approx(cfg.muon_lr * scale)]
    assert [g["lr"] for g in adamw.param_groups] == [pytest.approx(cfg.lr * scale)] * 2
    assert [g["weight_decay"] for g in adamw.param_groups] == [cfg.weight_decay, 0.0]  # none on biases, norms
    assert lr_scale(cfg.max_iters, cfg) == pytest.approx(cfg.min_lr / cfg.lr)


def test_adamw_alone_trains_every_parameter():
    params = copy.deepcopy(TINY)
    params["train"]["optimizer"] = "adamw"
    run_config = schema.resolve(params)
    model = GPT(run_config.for_vocab(30))
    optimizers = build_optimizers(model, run_config.train)
    assert list(optimizers.optimizers) == ["adamw"]
    assert sum(len(g["params"]) for g in optimizers.param_groups) == len(list(model.parameters()))


def test_the_kept_model_is_the_moving_average_of_the_weights_with_its_decay_warmed_up():
    params = copy.deepcopy(TINY)
    params["train"]["ema"] = 0.5
    run_config = schema.resolve(params)
    torch.manual_seed(0)
    model = GPT(run_config.for_vocab(30))
    trainer = Trainer(model=model, forward=model, optimizer=build_optimizers(model, run_config.train),
                           cfg=run_config.train, data=torch.randint(30, (500,)), block_size=16,
                           device=torch.device("cpu"), batches=torch.Generator().manual_seed(0),
                           average=weight_average(model, 0.5))
    start = [p.detach().clone() for p in trainer.evaluated.parameters()]
    # before any step: the initial weights
    assert all(torch.equal(a, p) for a, p in zip(start, model.parameters(), strict=True))
    expected = None
    for n in range(12):
        trainer.train_step()
        weights = [p.detach().clone() for p in model.parameters()]
        decay = min(0.5, (1 + n) / (EMA_WARMUP + n))  # n: the updates before this one (the first copies)
        expected = weights if n == 0 else [decay * e + (1 - decay) * w for e, w in zip(expected, weights, strict=True)]
    assert ema_decay(0, 0.99) == pytest.approx(0.1) and ema_decay(990, 0.99) == 0.99  # warmed up
    for kept, want, trained in zip(trainer.evaluated.parameters(), expected, model.parameters(), strict=True):
        torch.testing.assert_close(kept, want)
        assert not torch.equal(kept, trained)  # not the trained weights themselves
    params["train"]["ema"] = 0
    cfg = schema.resolve(params).train
    assert weight_average(model, cfg.ema) is None
    assert Trainer(model=model, forward=model, optimizer=build_optimizers(model, cfg), cfg=cfg,
                        data=torch.randint(30, (500,)), block_size=16, device=torch.device("cpu"),
                        batches=torch.Generator().manual_seed(0)).evaluated is model


@pytest.mark.parametrize(
    "section, key, value, expected",
    [
        ("train", "learning_rate", 0.1, "train.learning_rate is not a known setting; train has: batch_size"),
        ("train", "optimizer", "sgd", "train.optimizer must be one of adamw, muon, got 'sgd'"),
        ("train", "muon_lr", 0, "train.muon_lr must be positive, got 0"),
        ("train", "muon_lr", None, "train.muon_lr is missing"),
        ("model", "n_layers", 2, "model.n_layers is not a known setting (did you mean model.n_layer?)"),
        ("data", "val_fracton", 0.1, "data.val_fracton is not a known setting (did you mean data.val_fraction?)"),
        ("data", "val_fraction", None, "data.val_fraction is missing; data needs: url, sha256, val_fraction"),
        ("train", "lr", None, "train.lr is missing; train needs: batch_size"),
        ("model", "positions", None, "model.positions is missing"),
        ("train", "lr", "fast", "train.lr must be float, got 'fast'"),
        ("train", "max_iters", 10.5, "train.max_iters must be int"),
        ("train", "lr", 0, "train.lr must be positive, got 0"),
        ("train", "lr", -0.1, "train.lr must be positive"),
        ("train", "batch_size", 0, "train.batch_size must be positive"),
        ("train", "max_iters", 0, "train.max_iters must be positive"),
        ("train", "device", "tpu", "train.device must be one of auto, cpu, cuda, got 'tpu'"),
        ("train", "precision", "fp16", "train.precision must be one of fp32, bf16, got 'fp16'"),
        ("train", "compile", "yes", "train.compile must be bool, got 'yes'"),
        ("train", "ema", 1.0, "train.ema must be at least 0 and below 1 (0 turns the average off), got 1.0"),
        ("train", "ema", -0.5, "train.ema must be at least 0 and below 1"),
        ("model", "n_head", 3, "model.n_embd must be divisible by n_head"),
        ("model", "n_embd", 0, "model.n_embd must be a positive integer"),
        ("data", "val_fraction", "10%", "data.val_fraction must be a number between 0 and 1"),
        ("data", "val_fraction", 1.0, "data.val_fraction must be a number between 0 and 1"),
    ],
)
def test_bad_params_are_refused_naming_the_key(section, key, value, expected):
    params = copy.deepcopy(TINY)
    params[section][key] = value
    if value is None:
        del params[section][key]
    with pytest.raises(ValueError) as info:
        schema.resolve(params)
    assert expected in str(info.value)


def test_bad_params_stop_the_stage_before_training_with_one_line(corpus_path, tmp_path):
    params = copy.deepcopy(TINY)
    params["model"]["block_size"] = 5000  # longer than the ~2,000-character validation split
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(params))
    proc = subprocess.run(stage_command(params_file, corpus_path, tmp_path / "out"), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("train: model.block_size is 5000 but the validation split has only")
    assert not (tmp_path / "out").exists()  # refused before anything was written


@pytest.mark.parametrize(("key", "value", "message"), [
    ("precision", "bf16", "train: train.precision is 'bf16' but this run is on cpu"),
    ("cuda_graph", True, "train: train.cuda_graph is true but this run is on cpu: a CUDA graph needs a CUDA device"),
])
def test_a_cuda_only_setting_on_a_cpu_is_refused_in_one_line_naming_the_key(corpus_path, tmp_path, key, value,
                                                                               message):
    params = copy.deepcopy(TINY)
    params["train"][key] = value
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(params))
    proc = subprocess.run(stage_command(params_file, corpus_path, tmp_path / "out"), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0
    assert proc.stderr.startswith(message)
    assert not (tmp_path / "out").exists()


def test_compile_true_trains_through_the_real_compiler_and_logs_its_time(corpus_path, reference_run, tmp_path):
    """train.compile: true with torch.compile as it is (inductor, on this CPU's C compiler): the run trains, its
    curve is the eager run's up to the fused kernels' rounding, and the run log keeps the first step's time."""
    params = copy.deepcopy(TINY)
    params["train"].update(compile=True)
    torch._dynamo.reset()  # compile in this test, whatever ran before it in this process
    metrics = run(params, corpus_path, tmp_path)
    eager, _ = reference_run
    assert metrics["iterations"] == 40
    compiled_curve = artifacts.read_curve(tmp_path / "plot.csv", "train")
    eager_curve = artifacts.read_curve(reference_run[1] / "plot.csv", "train")
    assert compiled_curve.val_loss == pytest.approx(eager_curve.val_loss, abs=2e-3)
    assert metrics["best_val_loss"] == pytest.approx(eager["best_val_loss"], abs=2e-3)
    assert json.loads((tmp_path / "model.json").read_text())["train"]["compile"] is True
    log = RUN_LOG.read(tmp_path / "run_log.json")
    assert 0 < log.compile_seconds <= log.wall_seconds  # compiling is part of the training time
    assert RUN_LOG.read(reference_run[1] / "run_log.json").compile_seconds is None  # eager: nothing compiled


def test_a_training_step_reads_no_tensor_value_back_to_the_host(corpus_path):
    """Every host read of a tensor's value (.item(), bool(), int(), float()) is aten._local_scalar_dense: none in
    a step with Muon, AdamW, clipping and the weights' average (on a GPU each would make the host wait)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class HostReads(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.reads = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.reads += func is torch.ops.aten._local_scalar_dense.default
            return func(*args, **(kwargs or {}))

    resolved = schema.resolve(TINY)
    assert resolved.train.ema > 0 and resolved.train.grad_clip > 0 and resolved.train.optimizer == "muon"
    corpus = train.Corpus.load(corpus_path, resolved.data)
    torch.manual_seed(0)
    model = GPT(resolved.for_vocab(corpus.vocab.size))
    trainer = Trainer.for_run(model, resolved.train, corpus.train, torch.device("cpu"))
    trainer.train_step()  # the first: optimizer state made lazily, and the average's copy
    with HostReads() as mode:
        for _ in range(3):
            trainer.train_step()
    assert mode.reads == 0
    with HostReads() as mode:
        trainer.loss.item()
    assert mode.reads == 1  # the check sees a read


def test_a_trainer_loaded_from_another_ones_state_dict_takes_the_same_next_steps(corpus_path):
    """Trainer.state_dict() is all a checkpoint keeps of the training: a fresh trainer (other weights, other batch
    generator) that loads it goes on exactly as the first one does (weights, average, optimizers, step, batches)."""
    resolved = schema.resolve(TINY)
    corpus = train.Corpus.load(corpus_path, resolved.data)

    def fresh(seed: int) -> Trainer:
        torch.manual_seed(seed)
        cfg = dataclasses.replace(resolved.train, seed=seed)
        return Trainer.for_run(GPT(resolved.for_vocab(corpus.vocab.size)), cfg, corpus.train, torch.device("cpu"))

    first, second = fresh(0), fresh(1)
    for _ in range(3):
        first.train_step()
    saved = io.BytesIO()  # as a checkpoint keeps it: in bytes (torch's state_dicts share tensors with the live ones)
    torch.save(first.state_dict(), saved)
    second.load_state_dict(torch.load(io.BytesIO(saved.getvalue()), weights_only=False))
    for _ in range(2):
        first.train_step()
        second.train_step()
    assert second.step == first.step == 5 and first.average is not None
    for kept, loaded in ((first.model, second.model), (first.evaluated, second.evaluated)):
        for (name, a), b in zip(kept.state_dict().items(), loaded.state_dict().values(), strict=True):
            assert torch.equal(a, b), name


def test_keep_freed_memory_keeps_an_8_mib_block_out_of_mmap():
    import ctypes

    class Mallinfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                     "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype, libc.malloc.restype = Mallinfo2, ctypes.c_void_p
    assert machine.keep_freed_memory()
    before = libc.mallinfo2().hblks
    block = libc.malloc(8 * 1024 * 1024)  # a (4096, 512) float32 tensor's worth
    assert libc.mallinfo2().hblks == before  # from the heap: reused once freed, no fresh page faults
    libc.free(ctypes.c_void_p(block))


def test_threads_param_sets_torch_threads(corpus_path, tmp_path):
    params = copy.deepcopy(TINY)
    params["train"].update(threads=3, max_iters=1, eval_interval=1)
    resolved = schema.resolve(params)
    before = torch.get_num_threads()
    try:
        train.train(resolved, train.Corpus.load(corpus_path, resolved.data), outputs(tmp_path),
                    train.setup(resolved.train), progress=False, log=lambda line: None)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
