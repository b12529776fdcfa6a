"""The module corpus checked outside the grader: each file imported here, the course's weights put into its
parameters by a loader written for that file (not the grader's search), and its float64 output compared with
``mha.reference`` in eval and in training mode (dropout at 0). A file expected to get full marks must agree in
both modes; a file expected to lose points for a mistake must disagree in one of them."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from grader.module.layouts import CourseWeights
from mha import reference

from .module.test_checks import FILES, MODULES, expectation

# How each file holds W_Q, W_K, W_V, W_O: ("separate", q, k, v, o) nn.Linear paths; ("bare", q, k, v, o) (in, out)
# parameters; ("fused", qkv, o, order) with order "blocks" [q | k | v] or "heads" [q_1 k_1 v_1 | …]; ("conv1d", …) the
# same as (in, out) matrices; ("kv", q, kv, o); ("heads", list, o) the lecture's heads (key/query/value); ("mha", path);
# ("no-output", q, k, v) nn.Linear paths of a module with no W_O.
LOADERS = {
    "correct_annotated": ("separate", "linears.0", "linears.1", "linears.2", "linears.3"),
    "correct_bloem": ("separate", "toqueries", "tokeys", "tovalues", "unifyheads"),
    "correct_d2l": ("separate", "W_q", "W_k", "W_v", "W_o"),
    "correct_d2l_lazy": ("separate", "W_q", "W_k", "W_v", "W_o"),
    "correct_einsum_params": ("bare", "W_q", "W_k", "W_v", "W_o"),
    "correct_fairseq": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "correct_fixed_attn_dropout": ("fused", "c_attn", "c_proj", "blocks"),
    "correct_float32_only": ("separate", "query", "key", "value", "proj"),
    "correct_gpt2_conv1d": ("conv1d", "c_attn", "c_proj", "blocks"),
    "correct_greek_names": ("separate", "alpha", "beta", "gamma", "delta"),
    "correct_hf_style": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "correct_lecture_heads": ("heads", "heads", "proj"),
    "correct_llama": ("separate", "wq", "wk", "wv", "wo"),
    "correct_mingpt": ("fused", "c_attn", "c_proj", "blocks"),
    "correct_modded_nanogpt": ("separate", "c_q", "c_k", "c_v", "c_proj"),
    "correct_nanogpt": ("fused", "c_attn", "c_proj", "blocks"),
    "correct_neox_interleaved": ("fused", "query_key_value", "dense", "heads"),
    "correct_sdpa_bool_mask": ("separate", "query", "key", "value", "proj"),
    "correct_timm_qkv": ("fused", "qkv", "proj", "blocks"),
    "correct_torch_mha": ("mha", "attn"),
    "correct_torch_mha_time_first": ("mha", "inner.mha"),
    "correct_with_model": ("fused", "qkv", "proj", "blocks"),
    "correct_with_softmax_helper": ("separate", "W_q", "W_k", "W_v", "W_o"),
    "correct_x_transformers": ("kv", "to_q", "to_kv", "to_out.0"),
    "bug_causal_mask_as_key_padding": ("mha", "mha"),
    "bug_causal_only_in_training": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "bug_dropout_in_eval": ("fused", "c_attn", "c_proj", "blocks"),
    "bug_heads_reversed": ("heads", "heads", "proj"),
    "bug_is_causal_forgotten": ("fused", "c_attn", "c_proj", "blocks"),
    "bug_key_padding_row": ("mha", "mha"),
    "bug_lecture_no_mask": ("heads", "heads", "proj"),
    "bug_mask_after_softmax": ("separate", "query", "key", "value", "proj"),
    "bug_mask_hides_diagonal": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "bug_mask_only_in_eval": ("fused", "c_attn", "c_proj", "blocks"),
    "bug_mask_not_cut": ("fused", "c_attn", "c_proj", "blocks"),
    "bug_mask_sliced_wrong": ("fused", "qkv", "proj", "blocks"),
    "bug_merge_no_transpose": ("fused", "c_attn", "c_proj", "blocks"),
    "bug_mha_mask_inverted": ("mha", "mha"),
    "bug_missing_scale": ("separate", "W_q", "W_k", "W_v", "W_o"),
    "bug_nanogpt_triu_eq_zero": ("fused", "c_attn", "c_proj", "blocks"),
    "bug_no_w_o": ("no-output", "toqueries", "tokeys", "tovalues"),
    "bug_model_leaks": ("fused", "qkv", "proj", "blocks"),  # the module is right; the model leaks
    "bug_model_through_module": ("fused", "qkv", "proj", "blocks"),
    "bug_no_output_projection": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "bug_scale_by_c": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "bug_scale_sqrt_dmodel": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "bug_sdpa_mask_inverted": ("separate", "query", "key", "value", "proj"),
    "bug_softmax_wrong_dim": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "bug_triu_eq_zero": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "bug_view_both_ways": ("separate", "q_proj", "k_proj", "v_proj", "out_proj"),
    "bug_view_no_transpose": ("fused", "c_attn", "c_proj", "blocks"),
}
MODULE_RIGHT = {"bug_model_leaks"}
UNLOADABLE = {"bug_unmappable_low_rank"}  # no placement exists: that is its point


def _weights(d_model: int, h: int) -> CourseWeights:
    rng = np.random.default_rng(7)
    d_k = d_model // h
    mats = [[rng.standard_normal((d_model, d_k)) * d_model ** -0.25 for _ in range(h)] for _ in range(3)]
    return CourseWeights(*mats, rng.standard_normal((d_model, d_model)) / math.sqrt(d_model))


def _set(module, path: str, value: np.ndarray) -> None:
    target = module.get_parameter(path)
    with torch.no_grad():
        target.copy_(torch.as_tensor(value, dtype=target.dtype))


def _load(module, spec, W: CourseWeights) -> None:
    kind, *names = spec
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "bias" in name.rsplit(".", 1)[-1]:
                p.zero_()
    if kind == "no-output":
        for path, course in zip(names, (W.q_cat, W.k_cat, W.v_cat), strict=True):
            _set(module, f"{path}.weight", course.T)
    elif kind in ("separate", "bare"):
        for path, course in zip(names, (W.q_cat, W.k_cat, W.v_cat, W.o), strict=True):
            _set(module, path if kind == "bare" else f"{path}.weight", course if kind == "bare" else course.T)
    elif kind in ("fused", "conv1d"):
        qkv_path, o_path, order = names
        if order == "blocks":
            qkv = np.concatenate([W.q_cat, W.k_cat, W.v_cat], axis=1)
        else:
            qkv = np.concatenate([m[i] for i in range(len(W.q)) for m in (W.q, W.k, W.v)], axis=1)
        _set(module, f"{qkv_path}.weight", qkv if kind == "conv1d" else qkv.T)
        _set(module, f"{o_path}.weight", W.o if kind == "conv1d" else W.o.T)
    elif kind == "kv":
        q_path, kv_path, o_path = names
        _set(module, f"{q_path}.weight", W.q_cat.T)
        _set(module, f"{kv_path}.weight", np.concatenate([W.k_cat, W.v_cat], axis=1).T)
        _set(module, f"{o_path}.weight", W.o.T)
    elif kind == "heads":
        heads, o_path = names
        for i in range(len(W.q)):
            for role, mats in (("query", W.q), ("key", W.k), ("value", W.v)):
                _set(module, f"{heads}.{i}.{role}.weight", mats[i].T)
        _set(module, f"{o_path}.weight", W.o.T)
    else:
        (path,) = names
        _set(module, f"{path}.in_proj_weight", np.concatenate([W.q_cat, W.k_cat, W.v_cat], axis=1).T)
        _set(module, f"{path}.out_proj.weight", W.o.T)


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
    student = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(student)
    return student.MultiHeadAttention


def _outputs(path: Path, d_model: int = 8, h: int = 2) -> dict[str, np.ndarray]:
    """The module's output in eval mode and in training mode (every dropout at 0), and the reference's."""
    dtype = torch.float32 if path.stem == "correct_float32_only" else torch.float64
    torch.manual_seed(0)
    module = _module(path)(d_model, h, **({"attn_pdrop": 0.0} if path.stem == "correct_fixed_attn_dropout" else {}))
    x = np.random.default_rng(3).standard_normal((2, 6, d_model))
    if any(isinstance(p, torch.nn.parameter.UninitializedParameter) for p in module.parameters()):
        module(torch.zeros(1, 2, d_model))
    W = _weights(d_model, h)
    _load(module, LOADERS[path.stem], W)
    module = module.to(dtype)
    out = {}
    for mode in ("eval", "train"):
        module.train(mode == "train")
        if mode == "train":
            for m in module.modules():
                if isinstance(m, torch.nn.Dropout):
                    m.p = 0.0
        with torch.no_grad():
            try:
                y = module(torch.as_tensor(x, dtype=dtype))
            except (RuntimeError, AssertionError):  # a (T, T) mask as key_padding_mask: torch refuses it
                out[mode] = np.full_like(x, np.nan)
                continue
        out[mode] = (y[0] if isinstance(y, tuple) else y).double().numpy()
    out["reference"] = np.stack([reference.multi_head_attention(s, W.q, W.k, W.v, W.o, causal=True) for s in x])
    return out


@pytest.mark.parametrize("path", [p for p in FILES if p.stem not in UNLOADABLE], ids=lambda p: p.stem)
def test_each_corpus_module_agrees_with_the_reference_exactly_when_it_is_expected_to(path):
    kind, _ = expectation(path)
    out = _outputs(path)
    tol = 1e-4 if path.stem == "correct_float32_only" else 1e-9
    agrees = {mode: np.allclose(out[mode], out["reference"], atol=tol) for mode in ("eval", "train")}
    if kind == "full" or path.stem in MODULE_RIGHT or kind == "lost":
        assert agrees == {"eval": True, "train": True}, agrees
    else:
        assert not all(agrees.values()), agrees


def test_every_corpus_file_has_a_loader():
    assert {p.stem for p in FILES} == set(LOADERS) | UNLOADABLE


def _reference(x: np.ndarray, W: CourseWeights, causal: bool = True, W_O: np.ndarray | None = None) -> np.ndarray:
    W_O = W.o if W_O is None else W_O
    return np.stack([reference.multi_head_attention(s, W.q, W.k, W.v, W_O, causal=causal) for s in x])


def _run(stem: str, x: np.ndarray, W: CourseWeights, **options) -> np.ndarray:
    """A corpus module's float64 output in eval mode, the course's weights loaded by its loader."""
    torch.manual_seed(0)
    module = _module(MODULES / f"{stem}.py")(x.shape[2], len(W.q), **options)
    _load(module, LOADERS[stem], W)
    with torch.no_grad():
        return module.double().eval()(torch.as_tensor(x)).numpy()


def test_the_slips_named_by_cause_compute_what_their_names_say():
    W, x = _weights(8, 2), np.random.default_rng(3).standard_normal((2, 6, 8))
    # a mask made for block_size and not cut: the course's answer when T is block_size, refused below it
    assert np.allclose(_run("bug_mask_not_cut", x, W, block_size=6), _reference(x, W), atol=1e-9)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(16\) must match the size of tensor b \(6\)"):
        _run("bug_mask_not_cut", x, W, block_size=16)
    # no output projection: the heads side by side, the course's answer with W_O the identity
    assert np.allclose(_run("bug_no_w_o", x, W), _reference(x, W, W_O=np.eye(8)), atol=1e-9)
    # torch.triu compared == 0: each position sees itself and the future, the causal answer of the reversed sequence
    assert np.allclose(_run("bug_nanogpt_triu_eq_zero", x, W), _reference(x[:, ::-1], W)[:, ::-1], atol=1e-9)
    # a causal mask made a key_padding_mask: no causal mask at all
    assert np.allclose(_run("bug_key_padding_row", x, W), _reference(x, W, causal=False), atol=1e-9)
