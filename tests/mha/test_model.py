import numpy as np
import pytest
import torch

from mha import reference
from mha.model import GPT, KERNEL_FOR_DEVICE, KERNELS, sinusoidal_positions
from mha.schema import GPTConfig


def tiny(**overrides) -> GPTConfig:
    values = dict(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=16, dropout=0.0, scale_scores=True,
                  positions="learned")
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
        ({"scale_scores": 1}, "scale_scores", "bool"),
        ({"positions": "rotary"}, "positions", "one of learned, sinusoidal, none"),
    ],
)
def test_bad_config_raises_naming_field_value_and_what_is_allowed(overrides, field, allowed):
    with pytest.raises(ValueError) as info:
        tiny(**overrides)
    message = str(info.value)
    assert f"model.{field}" in message and allowed in message  # as params.yaml names it (mha.schema)
    assert repr(overrides[field]) in message


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n_head", [1, 2])
def test_without_the_scale_attention_is_the_course_attention_with_scores_q_kt(n_head, kernel):
    torch.manual_seed(0)
    model = GPT(tiny(n_head=n_head, scale_scores=False)).double().use_kernel(kernel)
    attn = model.blocks[0].attn
    with torch.no_grad():
        attn.c_attn.weight.normal_(0.0, 0.3)
    X = torch.randn(9, 16, dtype=torch.float64)  # (n, d_model)
    W_Q, W_K, W_V, W_O = course_matrices(attn, 16, n_head)
    x = X.numpy()
    # the course's steps with scale 1 (mha.reference always divides by √d_k, so step 2 is written out here)
    weights = [
        reference.softmax(reference.project(x, wq) @ reference.project(x, wk).T + reference.causal_mask(9))
        for wq, wk in zip(W_Q, W_K, strict=True)
    ]  # H × (n, n)
    heads = [A @ reference.project(x, wv) for A, wv in zip(weights, W_V, strict=True)]  # H × (n, d_k)
    expected = np.concatenate(heads, axis=1) @ W_O  # (n, d_model)
    with torch.no_grad():
        out = attn(X[None])[0].numpy()  # (n, d_model)
        got_weights = attn.weights(X[None])[0].numpy()  # (H, n, n)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(got_weights, np.stack(weights), rtol=0, atol=1e-10)
    scaled = reference.multi_head_trace(x, W_Q, W_K, W_V, W_O).output  # the same weights with 1/√d_k
    assert np.abs(scaled - expected).max() > 1e-3  # so the option changes the attention


def test_sinusoidal_table_is_the_course_formula():
    d_model = 10
    table = sinusoidal_positions(7, d_model).double().numpy()  # (7, 10)
    assert table.shape == (7, d_model)
    for pos in range(7):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert table[pos, 2 * i] == pytest.approx(np.sin(angle), abs=1e-7)
            assert table[pos, 2 * i + 1] == pytest.approx(np.cos(angle), abs=1e-7)
    # an odd d_model ends on a sine column
    assert sinusoidal_positions(3, 5)[2, 4].item() == pytest.approx(np.sin(2 / 10000 ** (4 / 5)), abs=1e-7)


def test_sinusoidal_positions_are_a_fixed_buffer_added_to_the_token_embeddings():
    torch.manual_seed(0)
    learned, sinusoidal = GPT(tiny()), GPT(tiny(positions="sinusoidal")).double()
    names = [name for name, _ in sinusoidal.named_parameters()]
    assert names == [name for name, _ in learned.named_parameters() if name != "pos_emb.weight"]
    assert "pos_table" not in sinusoidal.state_dict()  # rebuilt from the config, never saved
    idx = torch.randint(0, 11, (2, 12))
    added = sinusoidal._embed(idx) - sinusoidal.tok_emb(idx)  # (B, T, C)
    expected = sinusoidal_positions(16, 16).double()[:12] / 4  # (T, C): the course's table / √d_model
    torch.testing.assert_close(added, expected.expand(2, 12, 16), rtol=0, atol=1e-15)


def permuted_before_last(idx: torch.Tensor) -> torch.Tensor:
    """idx (1, T) with its first T-1 tokens in another order (a rotation by one) and the last kept."""
    changed = idx.clone()
    changed[0, :-1] = idx[0, :-1].roll(1)
    return changed


def positionless(n_layer: int) -> GPT:
    torch.manual_seed(0)
    model = GPT(tiny(positions="none", n_layer=n_layer)).double().eval()
    with torch.no_grad():  # larger than the init, so attention is far from uniform and order would show
        for block in model.blocks:
            block.attn.c_attn.weight.normal_(0.0, 0.5)
    return model


def test_without_positions_there_are_no_position_parameters():
    learned, none = GPT(tiny()), GPT(tiny(positions="none"))
    assert learned.num_parameters() - none.num_parameters() == 16 * 16  # block_size × d_model
    assert not any("pos" in name for name in [*none.state_dict(), *dict(none.named_buffers())])


def test_without_positions_one_layer_sees_the_tokens_before_the_last_as_a_set():
    """Self-attention without positions is permutation invariant: with one layer, the last position's
    output is the same whatever the order of the tokens before it, and the first sees only its own token."""
    model = positionless(n_layer=1)
    idx = torch.tensor([[1, 5, 2, 9, 3, 7, 4, 6]])
    with torch.no_grad():
        a, b = model(idx)[0], model(permuted_before_last(idx))[0]  # (1, T, vocab) each
    torch.testing.assert_close(a[0, -1], b[0, -1], rtol=0, atol=1e-12)
    assert (a[0, 1:-1] - b[0, 1:-1]).abs().max() > 1e-3  # the middle positions see other prefixes
    with_positions = GPT(tiny(n_layer=1)).double().eval()
    with torch.no_grad():
        c, d = with_positions(idx)[0], with_positions(permuted_before_last(idx))[0]
    assert (c[0, -1] - d[0, -1]).abs().max() > 1e-6  # learned positions make the order visible


def test_without_positions_two_causal_layers_still_see_order_through_the_mask():
    """With a second layer the last position reads the first layer's states, and each of those summarises
    its own prefix (the causal mask): permuting the earlier tokens changes those states, so order leaks in
    even without positions. The first position still sees only its own token."""
    model = positionless(n_layer=2)
    idx = torch.tensor([[1, 5, 2, 9, 3, 7, 4, 6]])
    changed = idx.clone()
    changed[0, 1:] = idx[0, 1:].flip(0)  # every later token moved
    with torch.no_grad():
        a, b, c = model(idx)[0], model(permuted_before_last(idx))[0], model(changed)[0]
    assert (a[0, -1] - b[0, -1]).abs().max() > 1e-3  # measured: 0.015, against 1e-16 with one layer
    torch.testing.assert_close(a[0, 0], c[0, 0], rtol=0, atol=0)


@pytest.mark.parametrize("n_head", [1, 4, 8])
def test_each_head_count_at_d_model_128_builds_runs_and_gives_per_head_weights(n_head):
    torch.manual_seed(0)
    model = GPT(tiny(vocab_size=11, block_size=32, n_head=n_head, n_embd=128)).double()
    idx = torch.randint(0, 11, (2, 20))
    logits, loss = model(idx, idx)
    assert logits.shape == (2, 20, 11) and torch.isfinite(loss)
    weights = model.attention_weights(idx)  # (L, B, H, T, T)
    assert weights.shape == (2, 2, n_head, 20, 20)
    # layer 0's heads are the course's heads, each with d_k = 128 / n_head
    X = model.blocks[0].ln_1(model._embed(idx))[0].detach().numpy()  # (T, d_model)
    W_Q, W_K, _, _ = course_matrices(model.blocks[0].attn, 128, n_head)
    assert W_Q[0].shape == (128, 128 // n_head)
    for h in range(n_head):
        expected = reference.attention_weights(X @ W_Q[h], X @ W_K[h])  # (T, T)
        np.testing.assert_allclose(weights[0, 0, h].numpy(), expected, rtol=0, atol=1e-12)


def test_learned_and_sinusoidal_models_from_one_seed_differ_only_in_their_position_table():
    models = {}
    for positions in ("learned", "sinusoidal", "none"):
        torch.manual_seed(3)
        models[positions] = GPT(tiny(vocab_size=20, block_size=16, n_embd=32, positions=positions))
    shared = models["none"].state_dict()
    for positions in ("learned", "sinusoidal"):
        state = models[positions].state_dict()
        assert set(state) - set(shared) == ({"pos_emb.weight"} if positions == "learned" else set())
        assert all(torch.equal(state[k], v) for k, v in shared.items()), positions
    # the learned model with the sinusoidal table, as it enters, as its weights computes what the sinusoidal one does
    learned, sinusoidal = models["learned"], models["sinusoidal"]
    with torch.no_grad():
        learned.pos_emb.weight.copy_(sinusoidal.pos_table * sinusoidal.position_scale)
    idx = torch.randint(20, (2, 16), generator=torch.Generator().manual_seed(0))
    assert torch.equal(learned(idx)[0], sinusoidal(idx)[0])


def test_tokens_and_sinusoidal_positions_enter_in_the_papers_ratio():
    """"Attention Is All You Need": tokens × √d_model + the table; here that sum / √d_model."""
    torch.manual_seed(0)
    model = GPT(tiny(vocab_size=20, block_size=16, n_embd=64, positions="sinusoidal")).eval()
    idx = torch.tensor([[3, 1, 4]])
    paper = model.tok_emb.weight[idx] * 8.0 + sinusoidal_positions(16, 64)[:3]  # √64 = 8
    assert torch.allclose(model._embed(idx), paper / 8.0, atol=1e-7)
    table = model.pos_table * model.position_scale  # as it enters: a norm of √(d_model / 2) / √d_model per position
    assert torch.allclose(table.norm(dim=1), torch.full((16,), 0.5 ** 0.5))
