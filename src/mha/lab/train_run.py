"""One controlled run of the lab: trained exactly as the main runs are (mha.train), then asked whether it
uses the order of the characters (mha.lab.order), with the weights it ended with."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mha import train
from mha.artifacts.lab import OrderSensitivity
from mha.artifacts.layout import RunFiles
from mha.lab.order import order_sensitivity
from mha.schema import OrderSettings, RunConfig


@dataclass(frozen=True)
class LabRunResults:
    training: train.Trained  # its results, and its run log
    order: OrderSensitivity


def train_lab_run(run: RunConfig, corpus: train.Corpus, files: RunFiles, order: OrderSettings,
                  device: torch.device, *, data_path: str = "", progress: bool = True) -> LabRunResults:
    """Train (or resume) the run on ``device`` (from mha.train.setup), writing mha.train's outputs to ``files``;
    return its results and order sensitivity, measured on windows of model.block_size characters with the
    weights it ended with. The caller writes ``files.order``."""
    training = train.train(run, corpus, files, device, data_path=data_path, progress=progress)
    sensitivity = order_sensitivity(training.model, corpus, order.windows, run.model.block_size, order.seed)
    return LabRunResults(training, sensitivity)
