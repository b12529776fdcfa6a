# Convention: PyTorch's F.scaled_dot_product_attention(q, k, v, is_causal=True) for the head output
# (float64 tensors); the weights, which SDPA does not return, from torch.softmax on a -inf mask.
import math

import torch
import torch.nn.functional as F


def project(X, W):
    return torch.from_numpy(X) @ torch.from_numpy(W)


def scaled_scores(Q, K):
    Q, K = torch.as_tensor(Q), torch.as_tensor(K)
    return Q @ K.mT / math.sqrt(Q.shape[-1])


def causal_mask(n):
    return torch.full((n, n), float("-inf"), dtype=torch.float64).triu(1)


def softmax(S):
    return torch.softmax(torch.as_tensor(S), dim=-1)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    return softmax(S + causal_mask(S.shape[0]) if causal else S)


def attention_head(Q, K, V, causal=True):
    Q, K, V = (torch.as_tensor(a) for a in (Q, K, V))
    return F.scaled_dot_product_attention(Q[None], K[None], V[None], is_causal=causal)[0]


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    X = torch.as_tensor(X)
    q = torch.stack([X @ torch.as_tensor(w) for w in W_Q])  # (h, n, d_k)
    k = torch.stack([X @ torch.as_tensor(w) for w in W_K])
    v = torch.stack([X @ torch.as_tensor(w) for w in W_V])
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # (h, n, d_k)
    return y.transpose(0, 1).reshape(X.shape[0], -1) @ torch.as_tensor(W_O)
