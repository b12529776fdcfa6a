"""Question 2's checks: the student's module driven in the sandbox, judged here, as keys and values.

The driver in the sandbox (``harness.py``) only builds the module, loads the weights sent, runs forward on
the inputs sent and returns raw numbers; every byte is read as hostile (``wire``) and everything is judged
here. With the course's weights loaded in the student's layout (``layouts``: candidates, the one the
module's own forward agrees with kept): the worked example and hidden seeded cases against
``mha.reference``, within ``grader.tolerance``'s policy, in eval mode and in training mode (dropout at
0), training mode both under ``torch.no_grad()`` and with gradients on, as the module is trained (a module
that computes otherwise when it is really trained is judged by that). Without weights, on the module's own
seeded initialisation: causality by perturbation (change the inputs after position t; nothing at or
before t may move) in the same three runs, batch independence, eval twice, inputs shorter than
``block_size``, float32 and float64; none of these counts for a module that does not attend: whose
outputs do not depend on earlier positions (the identity, a per-position map), or depend on them with
weights that do not depend on the content (a running mean, any fixed average, any linear map: the
response to a change at one position is then the same whatever the other inputs are). Each failing check
leaves evidence (``Evidence``); ``diagnose`` names mistakes from it. Every failure of the student's code is
a failed check, never an error of the grader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from grader import tolerance
from grader.messages import Message
from grader.module import layouts, variants, wire
from grader.module.contract import MODEL_FUNCTION, MODULE_CLASS, MODULE_TESTS
from grader.outcome_messages import describe
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Status
from grader.sandbox.session import Sandbox
from mha import worked_example

# Relative change that counts as "moved" in the weight-free checks: float64 runs differ by ~1e-15, a module
# with a float32 softmax inside (Hugging Face's) by ~1e-7; a real leak moves outputs by far more.
SAME = 1e-5
# Relative difference between two responses to the same change that shows weights computed from the content: float32
# noise is ~1e-6 of a response, the softmax's own curvature at GPT-2's tiny initialisation (std 0.02) ~1e-2.
CONTENT = 1e-4
FREE = {"d_model": 16, "n_heads": 4, "block_size": 16, "dropout_milli": 200}  # the weight-free checks' module
FREE_T = 8  # sequence length of the weight-free checks
# The runs every check is made in: eval() and train() under torch.no_grad(), and train() with gradients on ("grad").
MODES = ("eval", "train", "grad")
_MODE_SPEC = {"eval": {}, "train": {"train": 1}, "grad": {"train": 1, "grad": 1}}
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


@dataclass
class Evidence:
    """What the failing checks showed, for ``diagnose``."""

    explained: list[frozenset[str]] = field(default_factory=list)  # per failing weighted case and mode
    leak: dict[str, int] = field(default_factory=dict)  # per mode, the first position (from 1) that saw later inputs
    eval_differs: bool = False
    # forward failed as nn.MultiheadAttention does on a (T, T) key_padding_mask, or its nn.MultiheadAttention is given
    # a key_padding_mask and no other mask
    key_padding: bool = False
    mask_not_cut: bool = False  # forward failed on every T below block_size as a (block_size, block_size) mask does
    model_leak: int | None = None  # the same for the whole model's logits


@dataclass(frozen=True)
class CheckVerdict:
    """One check's verdict: cases run, cases failed, the first failure, notes."""

    cases: int
    failed: int = 0
    first_failure: tuple[Message | None, Message] | None = None
    notes: tuple[Message, ...] = ()


def _pass(cases: int, notes=()) -> CheckVerdict:
    return CheckVerdict(cases, 0, None, tuple(notes))


def _fail(cases: int, failed: int, detail: Message, label: Message | None = None, notes=()) -> CheckVerdict:
    return CheckVerdict(cases, failed, (label, detail), tuple(notes))


def _call_text(d_model: int, n_heads: int, spec: dict, init: tuple[str, ...]) -> str:
    """The constructor call the driver made, as the student would write it."""
    options = {"dropout": spec["dropout_milli"] / 1000} if "dropout_milli" in spec and "dropout" in init else {}
    if "block_size" in spec and "block_size" in init:
        options["block_size"] = spec["block_size"]
    return f"{MODULE_CLASS}({d_model}, {n_heads}" + "".join(f", {k}={v}" for k, v in options.items()) + ")"


class ModuleRunner:
    """Calls into the driver for one submission's MultiHeadAttention."""

    def __init__(self, box: Sandbox, limits: Limits, seed: int):
        self.box, self.limits, self.seed = box, limits, seed
        # torch's generator takes 64 bits; a secret's seed has 256 (numpy's Generator below takes it whole)
        self.torch_seed = seed % 2**63
        self.evidence = Evidence()
        self.dtype = 64  # 32 once the module is seen to run only in float32
        self.notes: list[Message] = []
        self._described: dict[tuple[int, int], wire.ModuleDescription] = {}
        self._free_runs: dict[str, np.ndarray] = {}

    def call(self, function: str, args: list, kwargs: dict):
        """The driver's answer: an array, or a JSON answer's value (a description, still to be checked)."""
        outcome = self.box.call(function, args, kwargs)
        message = describe(outcome, self.limits)
        if message is not None:
            raise Unusable(message)
        return outcome.value

    # ------------------------------------------------------------------ driving the module
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

    def accepts(self, option: str) -> bool:
        return option in self.describe(FREE["d_model"], FREE["n_heads"]).init

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
        if message is not None and outcome.status is Status.ERROR and _not_cut(outcome.error, T):
            self.evidence.mask_not_cut = True
        if message is not None:
            call = _call_text(int(spec["d_model"]), int(spec["n_heads"]), spec, info.init)
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

    # ------------------------------------------------------------------ checks with weights
    def weighted(self, cases: list[WeightedCase]) -> CheckVerdict:
        failed, first = 0, None
        for case in cases:
            detail = self._weighted_case(case)
            if detail is not None:
                failed += 1
                first = first or (case.label, detail)
        return CheckVerdict(len(cases), failed, first)

    def _weighted_case(self, case: WeightedCase) -> Message | None:
        W = case.weights
        h, d_model = len(W.q), W.o.shape[1]
        want = variants.expected(case.x, W)
        tols = [tolerance.tolerance("multi_head_attention", (x, W.q, W.k, W.v, W.o), {"causal": True}, y)
                for x, y in zip(case.x, want, strict=True)]
        tol = np.array(tols)[:, None, None]
        try:
            found = self.placements(W)
            spec = {"d_model": d_model, "n_heads": h, "dropout_milli": 0, "block_size": max(16, case.x.shape[1])}
            sets = {f"w{j}:{name}": value.reshape(1, -1)
                    for j, placed in enumerate(found) for name, value in placed.values.items()}
            outs = self.forward([case.x], {**spec, **sets, "sets": len(found)}, sets=len(found))  # (S, B, T, C)
            chosen = _choose(outs, case.x, W, want, tol)
            one = {f"w0:{name}": value.reshape(1, -1) for name, value in found[chosen].values.items()}
            # four draws in training mode: a module random there whatever its settings shows it
            trained = self.forward([case.x], {**spec, **one, "sets": 1, "train": 1, "repeat": 4})  # (4, B, T, C)
            # and training mode as it is trained, gradients on, with the first draw's seed
            graded = self.forward([case.x], {**spec, **one, "sets": 1, **_MODE_SPEC["grad"]})  # (1, B, T, C)
        except Unusable as exc:
            return exc.message
        if not bool(np.all(tolerance.close(outs[chosen], want, tol))):
            detail = self._wrong(case, "eval", outs[chosen], want, tol)
            return detail if "o" in found[chosen].roles else self._without_output(found[chosen], detail)
        if bool(np.all(tolerance.close(trained[0], want, tol))):
            if bool(np.all(tolerance.close(graded[0], want, tol))):
                return None
            self._grad_differs()
            return self._wrong(case, "grad", graded[0], want, tol)
        if any(_moved(trained[0], other) for other in trained[1:]):  # e.g. dropout it does not take as `dropout`
            if not any(n.key == "note.module_training_random" for n in self.notes):
                self.notes.append(Message("note.module_training_random"))
            return None
        return self._wrong(case, "train", trained[0], want, tol)

    @staticmethod
    def _without_output(placed: layouts.Placement, detail: Message) -> Message:
        """A module with no parameter left for W_O: where W_Q, W_K and W_V were found, then what came out."""
        found = {role: ", ".join(placed.roles[role]) for role in "qkv"}
        return Message("detail.module_no_output", {**found, "detail": detail})

    def _wrong(self, case: WeightedCase, mode: str, got: np.ndarray, want: np.ndarray, tol: np.ndarray) -> Message:
        self.evidence.explained.append(_explaining(case.x, case.weights, got, want, tol))
        wrong = ~tolerance.close(got, want, tol)
        b, t, c = (int(i) for i in np.argwhere(wrong)[0])
        values = {"wrong": int(wrong.sum()), "total": got.size, "entry": f"({b + 1},{t + 1},{c + 1})",
                  "got": float(got[b, t, c]), "mode": _mode_text(mode)}
        if case.published:
            return Message("detail.module_entries_worked", {**values, "want": float(want[b, t, c])})
        return Message("detail.module_entries", values)

    # ------------------------------------------------------------------ checks without weights
    def _free_input(self, B: int, T: int, salt: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, 23, salt])
        return rng.standard_normal((B, T, FREE["d_model"]))  # (B, T, C)

    def _free_spec(self, **more) -> dict:
        spec = {k: v for k, v in FREE.items() if k in ("d_model", "n_heads") or self.accepts(k.removesuffix("_milli"))}
        return {**spec, **more}

    def _perturbed(self, mode: str) -> np.ndarray:
        """The causality inputs' outputs in one mode, once (indices in ``_Free``): the base input, then each with
        every input after position t replaced (t = 0 … T-2; the last of them changes the last position only), then
        the base with only position 1 replaced, then another input, and it with its first and with its last
        position changed by as much as the base's were; in eval mode every input twice (a repeated run shows
        whether something random is left on)."""
        if mode not in self._free_runs:
            T = FREE_T
            base, other, alt = self._free_input(1, T, 0), self._free_input(1, T, 1), self._free_input(1, T, 6)
            inputs = [base] + [np.concatenate([base[:, : t + 1], other[:, t + 1:]], axis=1) for t in range(T - 1)]
            inputs.append(np.concatenate([other[:, :1], base[:, 1:]], axis=1))
            alt_first, alt_last = alt.copy(), alt.copy()
            alt_first[:, 0] += other[:, 0] - base[:, 0]
            alt_last[:, -1] += other[:, -1] - base[:, -1]
            inputs += [alt, alt_first, alt_last]
            more = {"repeat": 2, **_MODE_SPEC[mode]} if mode == "eval" else _MODE_SPEC[mode]
            self._free_runs[mode] = self.forward(inputs, self._free_spec(**more))  # (N or 2N, 1, T, C)
        return self._free_runs[mode]

    def _attends(self) -> Message | None:
        """None when, in some run, some position's output depends on another position's input (the outputs after
        position 1 on the input at position 1, or any output on later inputs) through weights that depend on the
        content: the other positions respond to the same change at the first (or the last) position differently
        on two inputs. Else why nothing counts."""
        T, mixes = FREE_T, False
        for mode in MODES:
            out = self._perturbed(mode)
            if not (_moved(out[0, 0, 1:], out[_Free.FIRST, 0, 1:])
                    or first_leak(out[0, 0], [o[0] for o in out[_Free.AFTER]]) is not None):
                continue
            mixes = True
            for changed, alt_changed, others in ((_Free.FIRST, _Free.ALT_FIRST, slice(1, None)),
                                                 (_Free.LAST, _Free.ALT_LAST, slice(0, T - 1))):
                seen = out[0, 0, others], out[changed, 0, others]  # (T-1, C) each
                if _moved(*seen) and _reweighted(seen[1] - seen[0],
                                                 out[alt_changed, 0, others] - out[_Free.ALT, 0, others]):
                    return None
        return Message("detail.fixed_mixing" if mixes else "detail.no_attention", {"length": T})

    def free(self, group: str) -> CheckVerdict:
        """A weight-free check, counted only for a module whose output depends on earlier positions."""
        try:
            gate = self._attends()
            if gate is not None:
                return _fail(1, 1, gate)
            return {"causal": self.causal, "batch": self.batch, "eval": self.eval_twice, "lengths": self.lengths,
                    "dtypes": self.dtypes}[group]()
        except Unusable as exc:
            return _fail(1, 1, exc.message)

    def causal(self) -> CheckVerdict:
        """Change every input after position t, for each t; report the first position that moved, in eval mode and
        in training mode, the training cases judged both under no_grad and with gradients on (a case fails if it
        leaks in either)."""
        T = FREE_T
        cases, first = 2 * (T - 1), None
        leaking = {"eval": set(), "train": set()}  # per mode, the t whose change after t moved something at or before t
        for mode in MODES:
            out = self._perturbed(mode)
            if mode == "eval" and _moved(out[0], out[_Free.N]):  # random in eval mode: a change proves nothing
                self.evidence.eval_differs = True
                return _fail(cases, cases, Message("detail.eval_differs"))
            if mode == "grad" and _moved(out, self._perturbed("train")):  # the same draws: only the gradients differ
                self._grad_differs()
            leak = first_leak(out[0, 0], [o[0] for o in out[_Free.AFTER]])
            if leak is None:
                continue
            self.evidence.leak[mode] = leak
            leaking["eval" if mode == "eval" else "train"] |= {
                t for t in range(T - 1) if _moved(out[0, 0, : t + 1], out[t + 1, 0, : t + 1])}
            first = first or Message("detail.module_leaks_future", {"position": leak, "length": T,
                                                                   "mode": _mode_text(mode)})
        failed = sum(len(ts) for ts in leaking.values())
        return _pass(cases) if first is None else _fail(cases, failed, first)

    def _grad_differs(self) -> None:
        """Tell once that the module computes otherwise with gradients on than under no_grad."""
        if not any(n.key == "note.module_grad_differs" for n in self.notes):
            self.notes.append(Message("note.module_grad_differs"))

    def batch(self) -> CheckVerdict:
        x = self._free_input(3, FREE_T, 2)
        together = self.forward([x], self._free_spec())[0]  # (3, T, C)
        alone = [self.forward([x[b: b + 1]], self._free_spec())[0, 0] for b in range(3)]
        for b in range(3):
            if _moved(together[b], alone[b]):
                return _fail(3, 1, Message("detail.batch_mixed", {"row": b + 1, "count": 3}))
        return _pass(3)

    def eval_twice(self) -> CheckVerdict:
        x = self._free_input(2, FREE_T, 3)
        out = self.forward([x], self._free_spec(repeat=2))  # (2, B, T, C)
        if _moved(out[0], out[1]):
            self.evidence.eval_differs = True
            return _fail(1, 1, Message("detail.eval_differs"))
        return _pass(1)

    def lengths(self) -> CheckVerdict:
        """Inputs of block_size and shorter: each must run and give the same outputs on the shared prefix."""
        full_T = FREE["block_size"] if self.accepts("block_size") else 12
        x = self._free_input(1, full_T, 4)
        full = self.forward([x], self._free_spec())[0, 0]  # (T, C)
        lengths = (full_T - 1, 5, 1)
        for T in lengths:
            label = Message("case.length", {"length": T, "block_size": full_T})
            try:
                short = self.forward([x[:, :T]], self._free_spec())[0, 0]  # (T, C)
            except Unusable as exc:
                return _fail(len(lengths), 1, exc.message, label)
            if _moved(short, full[:T]):
                return _fail(len(lengths), 1, Message("detail.prefix_differs", {"length": T}), label)
        return _pass(len(lengths))

    def dtypes(self) -> CheckVerdict:
        x = self._free_input(2, FREE_T, 5)
        results = {}
        for bits in (32, 64):
            label = Message("case.dtype", {"dtype": f"float{bits}"})
            try:
                results[bits] = self.forward([x], self._free_spec(dtype=bits))[0]
            except Unusable as exc:
                return _fail(2, 1, exc.message, label)
        scale = max(1.0, float(np.nanmax(np.abs(results[64]))))
        if not np.allclose(results[32], results[64], rtol=0, atol=1e-4 * scale, equal_nan=True):
            return _fail(2, 1, Message("detail.dtypes_differ"))
        return _pass(2)


class _Free:
    """Where each input of ``_perturbed`` is in its outputs (T = FREE_T)."""

    AFTER = slice(1, FREE_T)  # the base with every input after position t replaced, t = 0 … T-2
    LAST = FREE_T - 1  # of those, the base with its last position replaced
    FIRST = FREE_T  # the base with position 1 replaced
    ALT = FREE_T + 1  # another input
    ALT_FIRST = FREE_T + 2  # that one with position 1 changed by as much as FIRST's
    ALT_LAST = FREE_T + 3  # that one with its last position changed by as much as LAST's
    N = FREE_T + 4  # inputs per repeat: eval's second run of the base is at N


def _mode_text(mode: str) -> str | Message:
    """A run's mode as the messages show it: ``train()``, or train() with gradients on."""
    return Message("mode.train_grad") if mode == "grad" else f"{mode}()"


def _not_cut(error: str, T: int) -> bool:
    """Whether an error is a mask made for a longer block meeting a sequence of T (its scores T wide)."""
    found = _SIZE_ERROR.search(error)
    return found is not None and T in (sizes := {int(found.group(1)), int(found.group(2))}) and max(sizes) > T


@dataclass(frozen=True)
class WeightedCase:
    x: np.ndarray  # (B, T, d_model)
    weights: layouts.CourseWeights
    label: Message
    published: bool = False  # the worked example: its numbers may be shown


def worked_case() -> WeightedCase:
    ex = worked_example.load()
    W = layouts.CourseWeights(list(ex.W_Q), list(ex.W_K), list(ex.W_V), ex.W_O)
    return WeightedCase(ex.X[None], W, Message("case.worked", {}), published=True)


def hidden_cases(seed: int) -> list[WeightedCase]:
    """Seeded: random weights (scaled so scores stay of order one) for several (d_model, h), B 1-2, T 3-12."""
    rng = np.random.default_rng([seed, 23])
    cases = []
    for d_model, h in ((8, 2), (12, 3), (16, 4), (6, 2)):
        d_k = d_model // h
        B, T = int(rng.integers(1, 3)), int(rng.integers(3, 13))
        # entries of size d_model^-1/4 keep the scores of order one, where the softmax is neither flat nor saturated
        mats = [[rng.standard_normal((d_model, d_k)) * d_model ** -0.25 for _ in range(h)] for _ in range(3)]
        W = layouts.CourseWeights(*mats, rng.standard_normal((d_model, d_model)) / np.sqrt(d_model))
        label = Message("case.sizes", {"params": f"B={B}, T={T}, d_model={d_model}, h={h}"})
        cases.append(WeightedCase(rng.standard_normal((B, T, d_model)), W, label))
    return cases


def _choose(outs: np.ndarray, x: np.ndarray, W, want: np.ndarray, tol: np.ndarray) -> int:
    """The candidate placement the module's own forward agrees with: the course's answer, else one mistake's
    (the module computes with that placement, wrongly), else the first (names and order's best guess)."""
    for j, got in enumerate(outs):
        if bool(np.all(tolerance.close(got, want, tol))):
            return j
    for j, got in enumerate(outs):
        if _explaining(x, W, got, want, tol):
            return j
    return 0


def _moved(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two runs differ beyond float64 noise (NaN where both are NaN counts as the same)."""
    scale = max(1.0, float(np.nanmax(np.abs(a), initial=0.0)))
    return not np.allclose(a, b, rtol=0, atol=SAME * scale, equal_nan=True)


def _reweighted(response: np.ndarray, other: np.ndarray) -> bool:
    """Whether two responses to the same change differ beyond noise, relative to the response itself (a module at a
    tiny initialisation responds by little, but attention's share of it still shows)."""
    scale = float(np.nanmax(np.abs(response), initial=0.0))
    return not np.allclose(response, other, rtol=0, atol=CONTENT * scale, equal_nan=True)


def first_leak(base: np.ndarray, changed: list[np.ndarray]) -> int | None:
    """The first position (from 1) whose output moved when only later inputs changed: ``changed[t]``
    is the output with every input after position t (from 0) replaced."""
    leaks = [p for t, out in enumerate(changed) for p in range(t + 1) if _moved(base[p], out[p])]
    return min(leaks) + 1 if leaks else None


def _explaining(x: np.ndarray, W, got: np.ndarray, want: np.ndarray, tol: np.ndarray) -> frozenset[str]:
    """Every variant whose output explains the student's on one case: the same wherever the variant gives a
    number, and different from the reference somewhere there (rows a variant leaves with nothing to attend
    to are NaN in it, and NaN or 0 in torch, depending on the kernel: they are no evidence either way)."""
    found = set()
    for mistake_id, variant in variants.VARIANTS:
        mine = variant.forward(x, W)
        defined = np.isfinite(mine)
        agree = tolerance.close(got, mine, tol)
        differs = ~tolerance.close(mine, want, tol) & defined
        if np.all(agree | ~defined) and np.any(agree & differs):
            found.add(mistake_id)
    return frozenset(found)


def diagnose(evidence: Evidence) -> dict[tuple[str, str], tuple[str, ...]]:
    """Mistakes to name, per (test name, group), from the evidence: a weighted mistake only when one variant
    alone explains every failing weighted case; a leak in one mode only is named by that cause; a leak in both
    (or only with gradients on) by the weighted mistake when that one leaks, else ``leaks-future``."""
    named: dict[tuple[str, str], tuple[str, ...]] = {}
    explained = frozenset.intersection(*evidence.explained) if evidence.explained else frozenset()
    weighted = tuple(sorted(explained)) if len(explained) == 1 else ()
    leak_modes = set(evidence.leak)
    by_mode = {frozenset({"eval"}): "mask-only-in-training", frozenset({"train"}): "mask-only-in-eval",
               frozenset({"train", "grad"}): "mask-only-in-eval"}
    mode_cause = by_mode.get(frozenset(leak_modes))
    if mode_cause:
        named[(MODULE_CLASS, "causal")] = (mode_cause,)
        if evidence.explained:  # the weighted cases failed in that mode only: the same cause
            named[(MODULE_CLASS, "worked")] = named[(MODULE_CLASS, "hidden")] = (mode_cause,)
    elif weighted:
        named[(MODULE_CLASS, "worked")] = named[(MODULE_CLASS, "hidden")] = weighted
    # a leak wherever it runs, or only when it is really trained (gradients on): what the weights showed is the more
    # precise name of the leak
    if leak_modes >= {"eval", "train"} or leak_modes == {"grad"}:
        named[(MODULE_CLASS, "causal")] = weighted if weighted and variants.leaks(weighted[0]) else ("leaks-future",)
    if evidence.eval_differs:
        named[(MODULE_CLASS, "eval")] = ("dropout-in-eval",)
        named.setdefault((MODULE_CLASS, "causal"), ("dropout-in-eval",))
    for found, cause in ((evidence.key_padding, "causal-mask-as-key-padding"), (evidence.mask_not_cut, "mask-not-cut")):
        if found:  # every check failed on the same call: its cause, wherever it failed
            for group in MODULE_TESTS[MODULE_CLASS]:
                named[(MODULE_CLASS, group)] = (cause,)
    if evidence.model_leak is not None:
        named[(MODEL_FUNCTION, "causal")] = ("leaks-future",)
    return named
