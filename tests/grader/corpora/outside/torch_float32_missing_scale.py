# Convention: minGPT-style float32 tensors, but the scores are never divided by sqrt(d_k)
# (a catalog mistake, in float32: it must still lose points and be named missing-scale).
import torch


def t(a):
    return torch.as_tensor(a).float()


def project(X, W):
    return t(X) @ t(W)


def scaled_scores(Q, K):
    return t(Q) @ t(K).T


def causal_mask(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


def softmax(S):
    return torch.softmax(t(S), dim=1)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    return softmax(S + causal_mask(S.shape[0]) if causal else S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ t(V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return torch.cat([attention_head(project(X, q), project(X, k), project(X, v), causal) for q, k, v in zip(W_Q, W_K, W_V)], 1) @ t(W_O)
