"""The pieces of train.cuda_graph that run on any device: Muon with a tensor learning rate, the weights' average
that never reads its count on the host; and the graph itself refused off CUDA."""

from pathlib import Path

import pytest
import torch
import yaml
from torch.optim.swa_utils import AveragedModel

from mha import schema
from mha.training.average import WeightAverage, ema_decay
from mha.training.cuda_graph import CapturedStep
from mha.training.optimizers import MUON_MOMENTUM, TensorLrMuon
from mha.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[2]
PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())

MUON = {"momentum": MUON_MOMENTUM, "nesterov": True, "adjust_lr_fn": "original", "weight_decay": 0.1}


def matrices(seed: int) -> list[torch.nn.Parameter]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(shape, generator=generator)) for shape in ((32, 16), (16, 64))]


def test_tensor_lr_muon_takes_torch_muons_steps_with_its_learning_rate_on_the_device():
    ours, theirs = matrices(0), matrices(0)
    tensor_lr = torch.tensor(0.02)
    mine = TensorLrMuon(ours, lr=0.02, **MUON)
    mine.param_groups[0]["lr"] = tensor_lr
    reference = torch.optim.Muon(theirs, lr=0.02, **MUON)
    generator = torch.Generator().manual_seed(1)
    for step in range(5):
        lr = 0.02 * (1 - step / 10)  # a schedule: written into the tensor in place, as Trainer.set_lr does
        tensor_lr.fill_(lr)
        reference.param_groups[0]["lr"] = lr
        for a, b in zip(ours, theirs, strict=True):
            a.grad = torch.randn(a.shape, generator=generator)
            b.grad = a.grad.clone()
        mine.step()
        reference.step()
    for a, b, start in zip(ours, theirs, matrices(0), strict=True):
        assert not torch.equal(a, start)  # it moved
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert set(mine.state[ours[0]]) == set(reference.state[theirs[0]])  # the same state: checkpoints load


def test_the_weight_average_is_averaged_models_with_ema_decay_to_the_bit():
    """mha.training.average.WeightAverage computes its weight on the device; PyTorch's AveragedModel with the decay
    computed on the host (how the pipeline averaged before) gives the same bits, so a run's numbers did not change."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.LayerNorm(8))

    def host_update(averaged, current, updates):
        torch._foreach_lerp_(averaged, current, 1.0 - ema_decay(int(updates), 0.995))

    ours = WeightAverage(model, 0.995)
    theirs = AveragedModel(model, multi_avg_fn=host_update, use_buffers=False)
    for _ in range(30):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p) * 0.1)
        ours.update_parameters(model)
        theirs.update_parameters(model)
    assert ours.state_dict().keys() == theirs.state_dict().keys()  # a checkpoint's average loads in either
    for name, value in theirs.state_dict().items():
        assert torch.equal(ours.state_dict()[name], value), name


def test_a_captured_step_needs_a_cuda_trainer():
    cfg = schema.resolve(PARAMS).train
    model = torch.nn.Linear(2, 2)
    model.config = type("Config", (), {"block_size": 16})()
    trainer = Trainer(model=model, forward=model, optimizer=None, cfg=cfg, data=torch.zeros(100, dtype=torch.long),
                           block_size=16, device=torch.device("cpu"), batches=torch.Generator())
    with pytest.raises(ValueError, match="a CUDA graph needs a CUDA device, and this trainer is on cpu"):
        CapturedStep(trainer)


def test_params_yaml_keeps_cuda_graph_off_so_a_cpu_run_is_not_refused():
    assert PARAMS["train"]["cuda_graph"] is False
