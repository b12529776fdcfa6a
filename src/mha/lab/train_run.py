"""One controlled run of the lab: trained exactly as the main runs are (mha.train), then asked whether it
uses the order of the characters (mha.lab.order), with the weights it ended with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from mha import checkpoint, train
from mha.artifacts.lab import OrderSensitivity
from mha.config import RunConfig
from mha.lab.layout import RunFiles
from mha.lab.order import order_sensitivity
from mha.lab.runs import OrderSettings
from mha.model import GPT, KERNEL_FOR_DEVICE, GPTConfig


@dataclass(frozen=True)
class LabRunResults:
    training: train.Trained  # its results, and its run log
    order: OrderSensitivity


def train_lab_run(run: RunConfig, corpus: train.Corpus, files: RunFiles, order: OrderSettings, *,
                  data_path: str = "", progress: bool = True) -> LabRunResults:
    """Train (or resume) the run, writing mha.train's outputs to ``files``; return its results and order
    sensitivity, measured on windows of model.block_size characters. The caller writes ``files.order``."""
    outputs = train.Outputs(metrics=files.metrics, plot=files.plot, model=files.model, config=files.record,
                            sample=files.sample, attention=files.attention, run_log=files.run_log)
    training = train.train(run, corpus, outputs, data_path=data_path, progress=progress)
    model = trained_model(files.model, train.resolve_device(run.train.device))
    return LabRunResults(training, order_sensitivity(model, corpus, order.windows, run.model.block_size, order.seed))


def trained_model(checkpoint_path: Path, device: torch.device) -> GPT:
    """The model of a checkpoint (its config and weights), on ``device`` with that device's attention kernel."""
    saved = checkpoint.read(checkpoint_path)
    model = GPT(GPTConfig(**saved.config))
    model.load_state_dict(saved.model)
    return model.to(device).use_kernel(KERNEL_FOR_DEVICE[device.type])
