"""Question 2's calls into the driver in the sandbox (``harness.py``): build the student's module and read its
parameters, place the course's weights in them (``layouts``), run forward, and bring back raw numbers, checked
for shape. Every failure of the student's code is ``Unusable``, with a message that names the call; what a failure
shows about a mistake (a key_padding_mask given a causal mask, a mask made for block_size) goes to the evidence
(``diagnosis.Evidence``). Judging is ``checks``' and ``model_checks``'."""

from __future__ import annotations

import re

import numpy as np

from grader.messages import Message
from grader.module import layouts, wire
from grader.module.contract import MODULE_CLASS
from grader.module.diagnosis import Evidence
from grader.outcome_messages import describe
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Status
from grader.sandbox.session import Sandbox

# What torch says when a module holds float32 tensors and is handed float64 ones (or the reverse).
_DTYPE_ERROR = re.compile(r"dtype|Double|Float|scalar type", re.IGNORECASE)
# What nn.MultiheadAttention says when a (T, T) mask comes as key_padding_mask, which must be (B, T).
_KEY_PADDING_ERROR = re.compile(r"mask_type == 1|key_padd(ing|ed)_mask")
# What torch says when a mask made for block_size meets scores of a shorter input: "The size of tensor a (16) must
# match the size of tensor b (3) at non-singleton dimension 3".
_SIZE_ERROR = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton")


class Unusable(Exception):
    """The student's code did not give a usable answer; ``message`` says why."""

    def __init__(self, message: Message):
        super().__init__(message.key)
        self.message = message


def call_text(d_model: int, n_heads: int, spec: dict, init: tuple[str, ...]) -> str:
    """The constructor call the driver made, as the student would write it."""
    options = {"dropout": spec["dropout_milli"] / 1000} if "dropout_milli" in spec and "dropout" in init else {}
    if "block_size" in spec and "block_size" in init:
        options["block_size"] = spec["block_size"]
    return f"{MODULE_CLASS}({d_model}, {n_heads}" + "".join(f", {k}={v}" for k, v in options.items()) + ")"


def not_cut(error: str, T: int) -> bool:
    """Whether an error is a mask made for a longer block meeting a sequence of T (its scores T wide)."""
    found = _SIZE_ERROR.search(error)
    return found is not None and T in (sizes := {int(found.group(1)), int(found.group(2))}) and max(sizes) > T


class ModuleRunner:
    """Calls into the driver for one submission's MultiHeadAttention (and, through ``call``, its whole model); holds
    what the calls showed: the evidence, the notes to tell once, the dtype the module runs in."""

    def __init__(self, box: Sandbox, limits: Limits, seed: int):
        self.box, self.limits, self.seed = box, limits, seed
        # torch's generator takes 64 bits; a secret's seed has 256 (numpy's Generator below takes it whole)
        self.torch_seed = seed % 2**63
        self.evidence = Evidence()
        self.dtype = 64  # 32 once the module is seen to run only in float32
        self.notes: list[Message] = []
        self._described: dict[tuple[int, int], wire.ModuleDescription] = {}

    def note_once(self, note: Message) -> None:
        """Tell ``note`` once, on the first test, however many checks find it."""
        if not any(n.key == note.key for n in self.notes):
            self.notes.append(note)

    def call(self, function: str, args: list, kwargs: dict):
        """The driver's answer: an array, or a JSON answer's value (a description, still to be checked)."""
        outcome = self.box.call(function, args, kwargs)
        message = describe(outcome, self.limits)
        if message is not None:
            raise Unusable(message)
        return outcome.value

    def describe(self, d_model: int, n_heads: int) -> wire.ModuleDescription:
        """Build the module once (the call that says whether it can be built) and read its parameters."""
        key = (d_model, n_heads)
        if key not in self._described:
            spec = {"d_model": d_model, "n_heads": n_heads, "seed": self.torch_seed}
            try:
                value = self.call("_grader_module_describe", [], spec)
            except Unusable as exc:
                raise Unusable(Message("detail.build_failed", {"call": f"{MODULE_CLASS}({d_model}, {n_heads})",
                                                               "problem": exc.message})) from None
            info = wire.module_description(value)
            if info is None:
                raise Unusable(Message("detail.protocol"))
            if info.masks == ("key_padding_mask",):  # its nn.MultiheadAttention is given no causal mask but that one
                self.evidence.key_padding = True
            self._described[key] = info
        return self._described[key]

    def forward(self, inputs: list[np.ndarray], spec: dict, sets: int = 1) -> np.ndarray:
        """forward() on each (B, T, C) input apart (for each of ``sets`` weight sets); (sets·N·repeat, B, T, C), or
        Unusable naming the call that failed and a wrong shape. A module that runs only in float32 is run so."""
        B, T, C = inputs[0].shape
        info = self.describe(int(spec["d_model"]), int(spec["n_heads"]))
        spec = {"seed": self.torch_seed, **spec, "B": B, "T": T}
        runs = sets * len(inputs) * int(spec.get("repeat", 1))
        rows = [x.reshape(B * T, C) for x in inputs]
        outcome = self.box.call("_grader_module_forward", rows, {"dtype": self.dtype, **spec})
        if (self.dtype == 64 and "dtype" not in spec and outcome.status is Status.ERROR
                and _DTYPE_ERROR.search(outcome.error)):
            retry = self.box.call("_grader_module_forward", rows, {**spec, "dtype": 32})
            if retry.status is Status.OK:  # it runs only in float32: judged there, with float32's tolerance
                self.notes.append(Message("note.module_float32", {"error": outcome.error}))
                self.dtype, outcome = 32, retry
        message = describe(outcome, self.limits)
        if message is not None and outcome.status is Status.ERROR and _KEY_PADDING_ERROR.search(outcome.error):
            self.evidence.key_padding = True
        if message is not None and outcome.status is Status.ERROR and not_cut(outcome.error, T):
            self.evidence.mask_not_cut = True
        if message is not None:
            call = call_text(int(spec["d_model"]), int(spec["n_heads"]), spec, info.init)
            mode = "train()" if spec.get("train") else "eval()"
            raise Unusable(Message("detail.forward_failed", {"call": call, "mode": mode, "shape": str((B, T, C)),
                                                             "problem": message}))
        out = outcome.value
        if out.ndim != 4 or out.shape[1:] != (B, T, C) or out.shape[0] != runs:
            got = tuple(out.shape[1:]) if out.ndim == 4 else tuple(out.shape)
            raise Unusable(Message("detail.module_shape", {"expected": str((B, T, C)), "got": str(got)}))
        return out

    def placements(self, W: layouts.CourseWeights) -> list[layouts.Placement]:
        d_model, h = W.o.shape[1], len(W.q)
        info = self.describe(d_model, h)
        try:
            # no W_O among them: W_Q, W_K and W_V alone, so that the forward is judged and the slip named
            found = layouts.candidates(info.params, W) or layouts.candidates(info.params, W, output=False)
        except layouts.TooLarge as exc:
            raise Unusable(Message("detail.param_too_large", {"name": exc.param.name, "shape": str(exc.param.shape),
                                                               "limit": wire.MAX_FILL})) from None
        if not found:
            shapes = ", ".join(f"{p.name} {p.shape}" for p in info.params[:12]) or "-"
            raise Unusable(Message("detail.no_layout", {"found": shapes, "d_model": d_model, "h": h,
                                                        "d_k": d_model // h}))
        return found
