"""Question 2's checks of the student's module, judged here from the raw numbers ``runner`` brings back, as verdicts
(``verdict``: keys and values).

With the course's weights loaded in the student's layout (``layouts``: candidates, the one the module's own forward
agrees with kept): the worked example and hidden seeded cases (``cases``) against ``mha.reference``, within
``grader.tolerance``'s policy, in eval mode and in training mode (dropout at 0), training mode both under
``torch.no_grad()`` and with gradients on, as the module is trained (a module that computes otherwise when it is
really trained is judged by that). Without weights, on the module's own seeded initialisation: causality by
perturbation (change the inputs after position t; nothing at or before t may move) in the same three runs, batch
independence, eval twice, inputs shorter than ``block_size``, float32 and float64; none of these counts for a
module that does not attend: whose outputs do not depend on earlier positions (the identity, a per-position map),
or depend on them with weights that do not depend on the content (a running mean, any fixed average, any linear
map: the response to a change at one position is then the same whatever the other inputs are). Each failing check
leaves evidence (``diagnosis.Evidence``), from which ``diagnosis.diagnose`` names mistakes. Every failure of the
student's code is a failed check, never an error of the grader.
"""

from __future__ import annotations

import numpy as np

from grader import tolerance
from grader.messages import Message
from grader.module import layouts, variants
from grader.module.cases import WeightedCase
from grader.module.diagnosis import explaining
from grader.module.runner import ModuleRunner, Unusable
from grader.module.verdict import CheckVerdict, failed, passed

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


class ModuleChecks:
    """Every check of one submission's MultiHeadAttention, through its runner (which keeps the evidence and notes)."""

    def __init__(self, runner: ModuleRunner):
        self.runner = runner
        self._free_runs: dict[str, np.ndarray] = {}

    def accepts(self, option: str) -> bool:
        return option in self.runner.describe(FREE["d_model"], FREE["n_heads"]).init

    # ------------------------------------------------------------------ checks with weights
    def weighted(self, cases: list[WeightedCase]) -> CheckVerdict:
        failures, first = 0, None
        for case in cases:
            detail = self._weighted_case(case)
            if detail is not None:
                failures += 1
                first = first or (case.label, detail)
        return CheckVerdict(len(cases), failures, first)

    def _weighted_case(self, case: WeightedCase) -> Message | None:
        W = case.weights
        h, d_model = len(W.q), W.o.shape[1]
        want = variants.expected(case.x, W)
        tols = [tolerance.tolerance("multi_head_attention", (x, W.q, W.k, W.v, W.o), {"causal": True}, y)
                for x, y in zip(case.x, want, strict=True)]
        tol = np.array(tols)[:, None, None]
        try:
            found = self.runner.placements(W)
            spec = {"d_model": d_model, "n_heads": h, "dropout_milli": 0, "block_size": max(16, case.x.shape[1])}
            sets = {f"w{j}:{name}": value.reshape(1, -1)
                    for j, placed in enumerate(found) for name, value in placed.values.items()}
            outs = self.runner.forward([case.x], {**spec, **sets, "sets": len(found)}, sets=len(found))  # (S, B, T, C)
            chosen = _choose(outs, case.x, W, want, tol)
            one = {f"w0:{name}": value.reshape(1, -1) for name, value in found[chosen].values.items()}
            # four draws in training mode: a module random there whatever its settings shows it
            trained = self.runner.forward([case.x], {**spec, **one, "sets": 1, "train": 1, "repeat": 4})  # (4, B, T, C)
            # and training mode as it is trained, gradients on, with the first draw's seed
            graded = self.runner.forward([case.x], {**spec, **one, "sets": 1, **_MODE_SPEC["grad"]})  # (1, B, T, C)
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
        if any(moved(trained[0], other) for other in trained[1:]):  # e.g. dropout it does not take as `dropout`
            self.runner.note_once(Message("note.module_training_random"))
            return None
        return self._wrong(case, "train", trained[0], want, tol)

    @staticmethod
    def _without_output(placed: layouts.Placement, detail: Message) -> Message:
        """A module with no parameter left for W_O: where W_Q, W_K and W_V were found, then what came out."""
        found = {role: ", ".join(placed.roles[role]) for role in "qkv"}
        return Message("detail.module_no_output", {**found, "detail": detail})

    def _wrong(self, case: WeightedCase, mode: str, got: np.ndarray, want: np.ndarray, tol: np.ndarray) -> Message:
        self.runner.evidence.explained.append(explaining(case.x, case.weights, got, want, tol))
        wrong = ~tolerance.close(got, want, tol)
        b, t, c = (int(i) for i in np.argwhere(wrong)[0])
        values = {"wrong": int(wrong.sum()), "total": got.size, "entry": f"({b + 1},{t + 1},{c + 1})",
                  "got": float(got[b, t, c]), "mode": _mode_text(mode)}
        if case.published:
            return Message("detail.module_entries_worked", {**values, "want": float(want[b, t, c])})
        return Message("detail.module_entries", values)

    # ------------------------------------------------------------------ checks without weights
    def _free_input(self, B: int, T: int, salt: int) -> np.ndarray:
        rng = np.random.default_rng([self.runner.seed, 23, salt])
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
            self._free_runs[mode] = self.runner.forward(inputs, self._free_spec(**more))  # (N or 2N, 1, T, C)
        return self._free_runs[mode]

    def _attends(self) -> Message | None:
        """None when, in some run, some position's output depends on another position's input (the outputs after
        position 1 on the input at position 1, or any output on later inputs) through weights that depend on the
        content: the other positions respond to the same change at the first (or the last) position differently
        on two inputs. Else why nothing counts."""
        T, mixes = FREE_T, False
        for mode in MODES:
            out = self._perturbed(mode)
            if not (moved(out[0, 0, 1:], out[_Free.FIRST, 0, 1:])
                    or first_leak(out[0, 0], [o[0] for o in out[_Free.AFTER]]) is not None):
                continue
            mixes = True
            for changed, alt_changed, others in ((_Free.FIRST, _Free.ALT_FIRST, slice(1, None)),
                                                 (_Free.LAST, _Free.ALT_LAST, slice(0, T - 1))):
                seen = out[0, 0, others], out[changed, 0, others]  # (T-1, C) each
                if moved(*seen) and _reweighted(seen[1] - seen[0],
                                                 out[alt_changed, 0, others] - out[_Free.ALT, 0, others]):
                    return None
        return Message("detail.fixed_mixing" if mixes else "detail.no_attention", {"length": T})

    def free(self, group: str) -> CheckVerdict:
        """A weight-free check, counted only for a module whose output depends on earlier positions."""
        try:
            gate = self._attends()
            if gate is not None:
                return failed(1, 1, gate)
            return {"causal": self.causal, "batch": self.batch, "eval": self.eval_twice, "lengths": self.lengths,
                    "dtypes": self.dtypes}[group]()
        except Unusable as exc:
            return failed(1, 1, exc.message)

    def causal(self) -> CheckVerdict:
        """Change every input after position t, for each t; report the first position that moved, in eval mode and
        in training mode, the training cases judged both under no_grad and with gradients on (a case fails if it
        leaks in either)."""
        T = FREE_T
        cases, first = 2 * (T - 1), None
        leaking = {"eval": set(), "train": set()}  # per mode, the t whose change after t moved something at or before t
        for mode in MODES:
            out = self._perturbed(mode)
            if mode == "eval" and moved(out[0], out[_Free.N]):  # random in eval mode: a change proves nothing
                self.runner.evidence.eval_differs = True
                return failed(cases, cases, Message("detail.eval_differs"))
            if mode == "grad" and moved(out, self._perturbed("train")):  # the same draws: only the gradients differ
                self._grad_differs()
            leak = first_leak(out[0, 0], [o[0] for o in out[_Free.AFTER]])
            if leak is None:
                continue
            self.runner.evidence.leak[mode] = leak
            leaking["eval" if mode == "eval" else "train"] |= {
                t for t in range(T - 1) if moved(out[0, 0, : t + 1], out[t + 1, 0, : t + 1])}
            first = first or Message("detail.module_leaks_future", {"position": leak, "length": T,
                                                                   "mode": _mode_text(mode)})
        failures = sum(len(ts) for ts in leaking.values())
        return passed(cases) if first is None else failed(cases, failures, first)

    def _grad_differs(self) -> None:
        """Tell once that the module computes otherwise with gradients on than under no_grad."""
        self.runner.note_once(Message("note.module_grad_differs"))

    def batch(self) -> CheckVerdict:
        x = self._free_input(3, FREE_T, 2)
        together = self.runner.forward([x], self._free_spec())[0]  # (3, T, C)
        alone = [self.runner.forward([x[b: b + 1]], self._free_spec())[0, 0] for b in range(3)]
        for b in range(3):
            if moved(together[b], alone[b]):
                return failed(3, 1, Message("detail.batch_mixed", {"row": b + 1, "count": 3}))
        return passed(3)

    def eval_twice(self) -> CheckVerdict:
        x = self._free_input(2, FREE_T, 3)
        out = self.runner.forward([x], self._free_spec(repeat=2))  # (2, B, T, C)
        if moved(out[0], out[1]):
            self.runner.evidence.eval_differs = True
            return failed(1, 1, Message("detail.eval_differs"))
        return passed(1)

    def lengths(self) -> CheckVerdict:
        """Inputs of block_size and shorter: each must run and give the same outputs on the shared prefix."""
        full_T = FREE["block_size"] if self.accepts("block_size") else 12
        x = self._free_input(1, full_T, 4)
        full = self.runner.forward([x], self._free_spec())[0, 0]  # (T, C)
        lengths = (full_T - 1, 5, 1)
        for T in lengths:
            label = Message("case.length", {"length": T, "block_size": full_T})
            try:
                short = self.runner.forward([x[:, :T]], self._free_spec())[0, 0]  # (T, C)
            except Unusable as exc:
                return failed(len(lengths), 1, exc.message, label)
            if moved(short, full[:T]):
                return failed(len(lengths), 1, Message("detail.prefix_differs", {"length": T}), label)
        return passed(len(lengths))

    def dtypes(self) -> CheckVerdict:
        x = self._free_input(2, FREE_T, 5)
        results = {}
        for bits in (32, 64):
            label = Message("case.dtype", {"dtype": f"float{bits}"})
            try:
                results[bits] = self.runner.forward([x], self._free_spec(dtype=bits))[0]
            except Unusable as exc:
                return failed(2, 1, exc.message, label)
        scale = max(1.0, float(np.nanmax(np.abs(results[64]))))
        if not np.allclose(results[32], results[64], rtol=0, atol=1e-4 * scale, equal_nan=True):
            return failed(2, 1, Message("detail.dtypes_differ"))
        return passed(2)


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


def _choose(outs: np.ndarray, x: np.ndarray, W, want: np.ndarray, tol: np.ndarray) -> int:
    """The candidate placement the module's own forward agrees with: the course's answer, else one mistake's
    (the module computes with that placement, wrongly), else the first (names and order's best guess)."""
    for j, got in enumerate(outs):
        if bool(np.all(tolerance.close(got, want, tol))):
            return j
    for j, got in enumerate(outs):
        if explaining(x, W, got, want, tol):
            return j
    return 0


def moved(a: np.ndarray, b: np.ndarray) -> bool:
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
    leaks = [p for t, out in enumerate(changed) for p in range(t + 1) if moved(base[p], out[p])]
    return min(leaks) + 1 if leaks else None


