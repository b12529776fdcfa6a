"""The driver that runs beside a submission inside the sandbox for question 2: build, load, call, answer numbers.

This file is not imported by the grader: its source is sent to the child with the submission and run there
(``inside/serving.py``'s ``_prepare_harness``) before the submission is imported; its entry points are bound into
the submission's module after. It may use only the standard library, numpy and torch (imported on first use, so a
numpy-only question-1 file never pays for torch). It judges nothing and knows no answer: it builds what the grader
names, puts in the weights the grader sends, calls forward on the inputs the grader sends and returns what came
out, as raw numbers (a float array), or a description as a dict, which the child sends as a JSON answer
(``inside/wire.py``: parameter names, shapes, the class holding each, capped in count and length; which masks an
inner nn.MultiheadAttention is given). A submission
can reach and replace everything here; all it can forge is numbers and descriptions, which the grader
(``grader.module.wire``) treats as hostile and judges itself.

Each entry point is self-contained (it builds what it uses), so a restarted child answers the same. The
parent says what to do through keyword names (strings travel only as names): ``w:NAME`` is the value
to put into the parameter NAME, flattened to one row; ``wJ:NAME`` the same for the J-th of ``sets``
weight sets, each run on every input.
"""

import numpy as np

student = None  # set by the child runner: the submission's module
reference = None  # set by the child runner: the course's reference (mha/reference.py's source, run here)

_WEIGHT = "w:"
MAX_PARAMS = 512  # parameters described; the grader refuses a description with more
MAX_NAME = 200  # characters of a parameter's name
MASK_ARGS = ("attn_mask", "key_padding_mask", "is_causal")  # what an nn.MultiheadAttention may be given to mask


def _init_params(cls):
    import inspect

    try:
        return [str(n)[:MAX_NAME] for n in list(inspect.signature(cls).parameters)[:20]]
    except (TypeError, ValueError):
        return []


def _is_lazy(module):
    from torch.nn.parameter import UninitializedParameter

    return any(isinstance(p, UninitializedParameter) for p in module.parameters())


def _build(spec):
    """The student's MultiHeadAttention, seeded, built with the options its signature accepts; a lazy one
    (``nn.LazyLinear``) gets its shapes from one forward on zeros, as its first use would."""
    import torch

    torch.manual_seed(int(spec.get("seed", 0)))
    cls = student.MultiHeadAttention
    accepted = _init_params(cls)
    options = {"block_size": spec["block_size"]} if "block_size" in spec and "block_size" in accepted else {}
    if "dropout_milli" in spec and "dropout" in accepted:  # floats do not travel as keywords: thousandths do
        options["dropout"] = int(spec["dropout_milli"]) / 1000
    d_model = int(spec["d_model"])
    module = cls(d_model, int(spec["n_heads"]), **options)
    if _is_lazy(module):
        with torch.no_grad():
            module(torch.zeros(1, 2, d_model))
    return module


def _load(module, spec, prefix=_WEIGHT):
    import torch

    params = dict(module.named_parameters())
    with torch.no_grad():
        for key, flat in spec.items():
            if key.startswith(prefix):
                p = params[key[len(prefix):]]
                p.copy_(torch.as_tensor(np.asarray(flat).reshape(tuple(p.shape)), dtype=p.dtype))


def _dropout_off(module):
    """Every nn.Dropout and nn.MultiheadAttention inside at p = 0: training mode without randomness."""
    import torch

    for m in module.modules():
        if isinstance(m, torch.nn.modules.dropout._DropoutNd):
            m.p = 0.0
        elif isinstance(m, torch.nn.MultiheadAttention):
            m.dropout = 0.0


def _as_array(value):
    if isinstance(value, (tuple, list)):  # (output, weights) as nn.MultiheadAttention returns
        value = value[0]
    return value.detach().cpu().double().numpy()


def _mask_args(module, d_model):
    """Which of ``MASK_ARGS`` the module gives each nn.MultiheadAttention inside it (not None, not False), seen in one
    forward on zeros in each mode; a forward that fails is left to the checks, which run it again and say why."""
    import inspect

    import torch

    inner = [m for m in module.modules() if isinstance(m, torch.nn.MultiheadAttention)]
    if not inner:
        return []
    signature = inspect.signature(torch.nn.MultiheadAttention.forward)
    given = set()

    def record(mha, args, kwargs):
        try:
            bound = signature.bind(mha, *args, **kwargs).arguments
        except TypeError:
            return
        given.update(n for n in MASK_ARGS if bound.get(n) is not None and bound.get(n) is not False)

    hooks = [m.register_forward_pre_hook(record, with_kwargs=True) for m in inner]
    try:
        for train in (False, True):
            module.train(train)
            try:
                with torch.no_grad():
                    module(torch.zeros(1, 2, d_model))
            except Exception:  # noqa: BLE001 - the student's forward: its failure is judged by the checks
                pass
    finally:
        for hook in hooks:
            hook.remove()
    return sorted(given)


def _grader_module_describe(**spec):
    """The module's parameters (name, shape, the class of the module holding it), its constructor's options and the
    masks it gives an nn.MultiheadAttention inside it."""
    module = _build(spec)
    owners = dict(module.named_modules())
    params = []
    for name, p in module.named_parameters():
        if len(params) > MAX_PARAMS:
            break
        owner = owners.get(name.rpartition(".")[0])
        params.append([name[:MAX_NAME], [int(s) for s in p.shape][:8], type(owner).__name__[:MAX_NAME]])
    return {"params": params, "init": _init_params(student.MultiHeadAttention),
            "masks": _mask_args(module, int(spec["d_model"]))}


def _grader_module_forward(*inputs, **spec):
    """forward() on each input apart, (B·T, C) rows reshaped to (B, T, C); returns (S·N·R, B, T, C) for S weight
    sets, N inputs, R repeats.

    ``dtype`` 32 or 64 sets the module and the inputs; ``train`` 1 runs it in training mode with every dropout
    at 0 (and torch seeded before each call, seed + the repeat's index, for what a module draws itself); ``grad`` 1
    runs it as it is trained, gradients on (``torch.enable_grad()``, an input that requires grad), else every call
    is under ``torch.no_grad()``; ``repeat`` 2 runs every input twice in a row (the second run's outputs follow the
    first's)."""
    import torch

    dtype = torch.float32 if int(spec.get("dtype", 64)) == 32 else torch.float64
    train = bool(spec.get("train", 0))
    grad = bool(spec.get("grad", 0))
    B, T = int(spec["B"]), int(spec["T"])
    sets = int(spec.get("sets", 0))
    outputs = []
    for prefix in [f"w{j}:" for j in range(sets)] or [_WEIGHT]:
        module = _build(spec)
        _load(module, spec, prefix)
        module = module.to(dtype)
        module.train(train)
        if train:
            _dropout_off(module)
        with torch.enable_grad() if grad else torch.no_grad():
            for repeat in range(int(spec.get("repeat", 1))):
                for rows in inputs:
                    x = torch.as_tensor(np.asarray(rows), dtype=dtype).reshape(B, T, -1)  # (B, T, C)
                    if grad:  # a tensor that requires grad and is no leaf, as an embedding's output in training
                        x = x.detach().requires_grad_().clone()
                    if train:  # the same draws for every input of a repeat: a perturbation changes only the input
                        torch.manual_seed(int(spec.get("seed", 0)) + repeat)
                    outputs.append(_as_array(module(x)))
    return np.stack(outputs)


def _build_model(spec):
    import torch

    torch.manual_seed(int(spec.get("seed", 0)))
    return student.build_model(int(spec["vocab_size"]), int(spec["block_size"]))


def _logits(model, idx):
    out = model(idx)
    return out[0] if isinstance(out, (tuple, list)) else out


def _grader_model_describe(ids, **spec):
    """The model's parameters (name, shape, trainable, whether one backward pass on ``ids`` (B, T) gave it a
    gradient) and how many modules of the student's MultiHeadAttention class (or nn.MultiheadAttention) it
    called in that forward."""
    import torch

    model = _build_model(spec)
    model.train()
    _dropout_off(model)
    kinds = (student.MultiHeadAttention, torch.nn.MultiheadAttention)
    called = set()
    hooks = [m.register_forward_hook(lambda m, i, o: called.add(id(m)))
             for m in model.modules() if isinstance(m, kinds)]
    idx = torch.as_tensor(np.asarray(ids), dtype=torch.long)
    _logits(model, idx).double().square().mean().backward()
    for hook in hooks:
        hook.remove()
    params = []
    for name, p in model.named_parameters():  # a tied tensor once
        if len(params) > MAX_PARAMS:
            break
        used = p.grad is not None and bool(p.grad.abs().sum() > 0)
        params.append([name[:MAX_NAME], [int(s) for s in p.shape][:8], bool(p.requires_grad), used])
    return {"params": params, "attention_called": len(called)}


def _grader_model_forward(*inputs, **spec):
    """Logits of each (B, T) matrix of token ids; returns (N, B, T, vocab). ``train`` 1: training mode with every
    dropout at 0."""
    import torch

    model = _build_model(spec)
    train = bool(spec.get("train", 0))
    model.train(train)
    if train:
        _dropout_off(model)
    out = []
    with torch.no_grad():
        for ids in inputs:
            if train:
                torch.manual_seed(int(spec.get("seed", 0)))
            out.append(_logits(model, torch.as_tensor(np.asarray(ids), dtype=torch.long)).double().numpy())
    return np.stack(out)


def _grader_model_train(ids, held_out, **spec):
    """A few Adam steps on the windows of ``ids`` (rows of token ids, T + 1 each, B per step, in order); then the
    logits of the rows of ``held_out`` (T each) in eval mode. Returns (steps + rows·T·vocab,): the loss at
    every step, then the logits flattened.

    Adam is written out here: constructing torch.optim's first optimizer imports torch._dynamo lazily,
    3.7 s measured, more than the whole budget for grading one module."""
    import torch
    import torch.nn.functional as F

    model = _build_model(spec)
    model.train()
    data = torch.as_tensor(np.asarray(ids), dtype=torch.long)  # (steps·B, T + 1)
    B, lr = int(spec["B"]), float(spec["lr_milli"]) / 1000
    params = [p for p in model.parameters() if p.requires_grad]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    losses = []
    for step in range(1, len(data) // B + 1):
        rows = data[(step - 1) * B: step * B]
        logits = _logits(model, rows[:, :-1])  # (B, T, vocab)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[:, 1:].reshape(-1))
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
    model.eval()
    with torch.no_grad():
        held = _logits(model, torch.as_tensor(np.asarray(held_out), dtype=torch.long)).double().numpy()
    return np.concatenate([np.array(losses), held.reshape(-1)])


EXPORTS = {
    "_grader_module_describe": _grader_module_describe,
    "_grader_module_forward": _grader_module_forward,
    "_grader_model_describe": _grader_model_describe,
    "_grader_model_forward": _grader_model_forward,
    "_grader_model_train": _grader_model_train,
}
