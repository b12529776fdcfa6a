"""What runs beside a submission inside the sandbox, to drive a module the way the checks need.

This file is not imported by the grader: its source is sent to the child with the submission and run
there (``child_runner._install_harness``), after the submission is imported. It may use only the
standard library, numpy and torch (imported on first use, so a numpy-only question-1 file never pays for
torch). Each entry point is self-contained (it builds what it uses), so a restarted child answers the
same, and answers with numbers only: a float array, or a description as UTF-8 JSON bytes in a uint8
vector (``grader.module.protocol.decode_json`` reads it), which the sandbox's protocol carries as is.

The parent says what to do through keyword names (strings travel only as names): ``w:NAME`` is the
value to put into the parameter NAME, flattened to one row.
"""

import json

import numpy as np

student = None  # set by the child runner: the submission's module
reference = None  # set by the child runner: the course's reference (mha/reference.py's source, run here)

_WEIGHT = "w:"
_dumps, _frombuffer, _uint8 = json.dumps, np.frombuffer, np.uint8  # taken before the submission can patch them


def _json(value):
    return _frombuffer(_dumps(value).encode(), dtype=_uint8).copy()


def _init_params(cls):
    import inspect

    try:
        return list(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        return []


def _build(spec):
    """The student's MultiHeadAttention, seeded, built with the options its signature accepts."""
    import torch

    torch.manual_seed(int(spec.get("seed", 0)))
    cls = student.MultiHeadAttention
    accepted = _init_params(cls)
    options = {"block_size": spec["block_size"]} if "block_size" in spec and "block_size" in accepted else {}
    if "dropout_milli" in spec and "dropout" in accepted:  # floats do not travel as keywords: thousandths do
        options["dropout"] = int(spec["dropout_milli"]) / 1000
    module = cls(int(spec["d_model"]), int(spec["n_heads"]), **options)
    _load(module, spec)
    return module


def _load(module, spec):
    import torch

    params = dict(module.named_parameters())
    with torch.no_grad():
        for key, flat in spec.items():
            if key.startswith(_WEIGHT):
                p = params[key[len(_WEIGHT):]]
                p.copy_(torch.as_tensor(np.asarray(flat).reshape(tuple(p.shape)), dtype=p.dtype))


def _as_array(value):
    if isinstance(value, (tuple, list)):  # (output, weights) as nn.MultiheadAttention returns
        value = value[0]
    return value.detach().cpu().double().numpy()


def _grader_module_describe(**spec):
    """The module's parameters (name, shape, the class of the module holding it) and its constructor's options."""
    module = _build(spec)
    owners = dict(module.named_modules())
    params = []
    for name, p in module.named_parameters():
        owner = owners.get(name.rpartition(".")[0])
        params.append([name, list(p.shape), type(owner).__name__ if owner is not None else ""])
    return _json({"params": params, "init": _init_params(student.MultiHeadAttention)})


def _grader_module_forward(*inputs, **spec):
    """forward() on each input apart, (B·T, C) rows reshaped to (B, T, C); returns (N, B, T, C).

    ``dtype`` 32 or 64 sets the module and the inputs; ``train`` 1 leaves it in training mode;
    ``repeat`` 2 runs every input twice in a row (the second run's outputs follow the first's)."""
    import torch

    module = _build(spec)
    dtype = torch.float32 if int(spec.get("dtype", 64)) == 32 else torch.float64
    module = module.to(dtype)
    module.train(bool(spec.get("train", 0)))
    B, T = int(spec["B"]), int(spec["T"])
    outputs = []
    with torch.no_grad():
        for _ in range(int(spec.get("repeat", 1))):
            for rows in inputs:
                x = torch.as_tensor(np.asarray(rows), dtype=dtype).reshape(B, T, -1)  # (B, T, C)
                outputs.append(_as_array(module(x)))
    return np.stack(outputs)


def _build_model(spec):
    import torch

    torch.manual_seed(int(spec.get("seed", 0)))
    return student.build_model(int(spec["vocab_size"]), int(spec["block_size"]))


def _grader_model_count(**spec):
    """The number of trainable parameters (each shared tensor once) and whether the embedding is tied."""
    model = _build_model(spec)
    seen, total = set(), 0
    for p in model.parameters():  # parameters() yields a tied tensor once
        if p.requires_grad and id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return np.array([float(total)])


def _logits(model, idx):
    out = model(idx)
    return out[0] if isinstance(out, (tuple, list)) else out


def _grader_model_forward(*inputs, **spec):
    """Logits of each (B, T) matrix of token ids, in eval mode; returns (N, B, T, vocab)."""
    import torch

    model = _build_model(spec)
    model.eval()
    with torch.no_grad():
        out = [_logits(model, torch.as_tensor(np.asarray(ids), dtype=torch.long)).double().numpy() for ids in inputs]
    return np.stack(out)


def _grader_model_train(ids, **spec):
    """A few Adam steps on windows of ``ids`` (one row of token ids); the loss at every step.

    Adam is written out here: constructing torch.optim's first optimizer imports torch._dynamo lazily,
    3.7 s measured, more than the whole budget for grading one module."""
    import torch
    import torch.nn.functional as F

    model = _build_model(spec)
    model.train()
    generator = torch.Generator().manual_seed(int(spec.get("seed", 0)))
    data = torch.as_tensor(np.asarray(ids).reshape(-1), dtype=torch.long)
    B, T, steps, lr = int(spec["B"]), int(spec["T"]), int(spec["steps"]), float(spec["lr_milli"]) / 1000
    params = [p for p in model.parameters() if p.requires_grad]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    losses = []
    for step in range(1, steps + 1):
        starts = torch.randint(0, len(data) - T - 1, (B,), generator=generator)
        x = torch.stack([data[s:s + T] for s in starts])  # (B, T)
        y = torch.stack([data[s + 1:s + T + 1] for s in starts])  # (B, T)
        logits = _logits(model, x)  # (B, T, vocab)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        model.zero_grad(set_to_none=True)
        loss.backward()
        with torch.no_grad():
            for p, (m, v) in zip(params, moments, strict=True):  # Adam, betas (0.9, 0.999)
                if p.grad is None:
                    continue
                m.mul_(0.9).add_(p.grad, alpha=0.1)
                v.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                p.sub_(lr * (m / (1 - 0.9**step)) / ((v / (1 - 0.999**step)).sqrt() + 1e-8))
        losses.append(float(loss.detach()))
    return np.array(losses)


EXPORTS = {
    "_grader_module_describe": _grader_module_describe,
    "_grader_module_forward": _grader_module_forward,
    "_grader_model_count": _grader_model_count,
    "_grader_model_forward": _grader_model_forward,
    "_grader_model_train": _grader_model_train,
}
