# Convention: picoGPT — causal_mask = (1 - np.tri(n)) * -1e10 added to the scores; softmax with
# x - max(x, keepdims) ; numpy only, float64.
import numpy as np


def project(x, w):
    return x @ w


def scaled_scores(q, k):
    return q @ k.T / np.sqrt(q.shape[-1])


def causal_mask(n):
    return (1 - np.tri(n, dtype=np.float64)) * -1e10


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def attention_weights(q, k, causal=True):
    s = scaled_scores(q, k)
    return softmax(s + causal_mask(s.shape[0])) if causal else softmax(s)


def attention_head(q, k, v, causal=True):
    return attention_weights(q, k, causal) @ v


def multi_head_attention(x, W_Q, W_K, W_V, W_O, causal=True):
    out_heads = [attention_head(x @ wq, x @ wk, x @ wv, causal) for wq, wk, wv in zip(W_Q, W_K, W_V)]
    return np.hstack(out_heads) @ W_O
