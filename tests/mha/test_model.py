import numpy as np
import pytest
import torch

from mha import reference
from mha.model import GPT, KERNEL_FOR_DEVICE, KERNELS, GPTConfig


def tiny(**overrides) -> GPTConfig:
    values = dict(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=16, dropout=0.0)
    return GPTConfig(**{**values, **overrides})


def course_matrices(attn, n_embd: int, n_head: int):
    """The course's per-head (d_model, d_k) matrices and W_O, read out of the fused projection."""
    W = attn.c_attn.weight.detach()  # (3·C, C); PyTorch computes x @ W.T
    d_k = n_embd // n_head

    def per_head(block: int) -> list:
        start = block * n_embd  # rows of W for Q (block 0), K (1) or V (2)
        return [W[start + h * d_k : start + (h + 1) * d_k].T.numpy() for h in range(n_head)]

    return per_head(0), per_head(1), per_head(2), attn.c_proj.weight.detach().T.numpy()


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n_head", [1, 2, 4])
def test_attention_matches_the_float64_reference_to_1e_10(n_head, kernel):
    torch.manual_seed(0)
    model = GPT(tiny(n_head=n_head, n_embd=16)).double().use_kernel(kernel)
    attn = model.blocks[0].attn
    with torch.no_grad():  # larger weights than the init, so the softmax is far from uniform
        attn.c_attn.weight.normal_(0.0, 0.5)
    X = torch.randn(9, 16, dtype=torch.float64)  # (n, d_model)
    W_Q, W_K, W_V, W_O = course_matrices(attn, 16, n_head)
    expected = reference.multi_head_trace(X.numpy(), W_Q, W_K, W_V, W_O)
    with torch.no_grad():
        out = attn(X[None])[0].numpy()  # (n, d_model)
        weights = attn.weights(X[None])[0].numpy()  # (H, n, n)
    np.testing.assert_allclose(out, expected.output, rtol=0, atol=1e-10)
    for h, head in enumerate(expected.heads):
        np.testing.assert_allclose(weights[h], head.A, rtol=0, atol=1e-10)
    assert np.abs(expected.output).max() > 0.1  # a real comparison, not of two near-zero outputs


def test_the_two_kernels_give_the_same_loss_and_gradients_in_float64():
    torch.manual_seed(0)
    explicit = GPT(tiny()).double().use_kernel("explicit")
    sdpa = GPT(tiny()).double().use_kernel("sdpa")
    sdpa.load_state_dict(explicit.state_dict())
    idx = torch.randint(0, 11, (3, 16))
    losses = []
    for model in (explicit, sdpa):
        _, loss = model(idx, idx)
        loss.backward()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(losses[1], abs=1e-12)
    for (name, a), b in zip(explicit.named_parameters(), sdpa.parameters(), strict=True):
        torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=1e-12, msg=name)


def test_each_device_trains_with_the_measured_kernel_and_unknown_kernels_are_refused():
    assert KERNEL_FOR_DEVICE == {"cpu": "explicit", "cuda": "sdpa"}
    model = GPT(tiny()).use_kernel("sdpa")
    assert {block.attn.kernel for block in model.blocks} == {"sdpa"}
    with pytest.raises(ValueError, match="attention kernel must be one of explicit, sdpa, got 'flash'"):
        model.use_kernel("flash")


def test_forward_returns_logits_and_mean_cross_entropy():
    torch.manual_seed(0)
    model = GPT(tiny())
    idx = torch.randint(0, 11, (3, 16))
    logits, loss = model(idx, idx)
    assert logits.shape == (3, 16, 11)
    expected = torch.nn.functional.cross_entropy(logits.reshape(-1, 11), idx.reshape(-1))
    assert torch.allclose(loss, expected)
    assert model(idx)[1] is None
    # freshly initialised, the model guesses nearly uniformly: ln(vocab)
    assert abs(loss.item() - np.log(11)) < 0.1


def test_attention_is_causal_the_future_never_changes_the_past():
    torch.manual_seed(0)
    model = GPT(tiny()).eval()
    idx = torch.randint(0, 11, (1, 16))
    changed = idx.clone()
    changed[0, 10] = (idx[0, 10] + 1) % 11
    a, _ = model(idx)
    b, _ = model(changed)
    assert torch.equal(a[0, :10], b[0, :10])
    assert not torch.allclose(a[0, 10:], b[0, 10:])  # position 10 and later do see it


def test_without_attention_each_position_sees_only_its_own_token():
    torch.manual_seed(0)
    model = GPT(tiny(attention=False)).eval()
    idx = torch.randint(0, 11, (1, 16))
    changed = idx.clone()
    changed[0, 3] = (idx[0, 3] + 1) % 11
    a, _ = model(idx)
    b, _ = model(changed)
    assert not torch.allclose(a[0, 3], b[0, 3])
    assert torch.allclose(a[0, 4:], b[0, 4:]) and torch.allclose(a[0, :3], b[0, :3])


def test_without_attention_only_the_attention_sublayers_are_missing():
    with_attn, without = GPT(tiny()), GPT(tiny(attention=False))
    C, L = 16, 2
    per_layer = 2 * C + 4 * C * C  # ln_1 (weight, bias) + W_QKV (3·C·C) + W_O (C·C)
    assert with_attn.num_parameters() - without.num_parameters() == L * per_layer
    assert not any("attn" in name or "ln_1" in name for name, _ in without.named_parameters())
    with pytest.raises(ValueError, match="attention=False"):
        without.attention_weights(torch.zeros(1, 4, dtype=torch.long))


def test_attention_weights_are_causal_distributions_per_layer_and_head():
    torch.manual_seed(0)
    model = GPT(tiny(n_layer=3, n_head=4))
    weights = model.attention_weights(torch.randint(0, 11, (2, 12)))
    assert weights.shape == (3, 2, 4, 12, 12)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 2, 4, 12))
    assert torch.all(weights.triu(1) == 0)


def test_generate_is_reproducible_with_a_seeded_generator_and_crops_to_block_size():
    torch.manual_seed(0)
    model = GPT(tiny(block_size=8)).eval()
    prompt = torch.tensor([[1, 2, 3]])
    a = model.generate(prompt, 20, generator=torch.Generator().manual_seed(5))
    b = model.generate(prompt, 20, generator=torch.Generator().manual_seed(5))
    c = model.generate(prompt, 20, generator=torch.Generator().manual_seed(6))
    assert a.shape == (1, 23) and torch.equal(a[:, :3], prompt)
    assert torch.equal(a, b) and not torch.equal(a, c)
    top1 = model.generate(prompt, 5, top_k=1)
    logits, _ = model(prompt)
    assert top1[0, 3] == logits[0, -1].argmax()


def test_input_longer_than_block_size_is_refused_by_name():
    with pytest.raises(ValueError, match="block_size=16"):
        GPT(tiny())(torch.zeros(1, 17, dtype=torch.long))


@pytest.mark.parametrize(
    "overrides, field, allowed",
    [
        ({"n_embd": 30, "n_head": 4}, "n_embd", "divisible by n_head"),
        ({"n_layer": 0}, "n_layer", "positive"),
        ({"block_size": -4}, "block_size", "positive"),
        ({"vocab_size": 0}, "vocab_size", "positive"),
        ({"dropout": 1.0}, "dropout", "[0, 1)"),
        ({"n_head": 2.0}, "n_head", "int"),
        ({"n_layer": True}, "n_layer", "int"),
        ({"attention": "no"}, "attention", "bool"),
    ],
)
def test_bad_config_raises_naming_field_value_and_what_is_allowed(overrides, field, allowed):
    with pytest.raises(ValueError) as info:
        tiny(**overrides)
    message = str(info.value)
    assert f"GPTConfig.{field}" in message and allowed in message
    assert repr(overrides[field]) in message
