"""A correct submission in plain Python: nested lists and the math module, no numpy."""

import math


def _rows(M):
    return [[float(x) for x in row] for row in M]


def _matmul(A, B):
    A, B = _rows(A), _rows(B)
    return [[sum(a * B[k][j] for k, a in enumerate(row)) for j in range(len(B[0]))] for row in A]


def _transpose(A):
    return [list(col) for col in zip(*_rows(A))]


def project(X, W):
    return _matmul(X, W)


def scaled_scores(Q, K):
    d_k = len(_rows(Q)[0])
    return [[s / math.sqrt(d_k) for s in row] for row in _matmul(Q, _transpose(K))]


def causal_mask(n):
    return [[0.0 if j <= i else -math.inf for j in range(n)] for i in range(n)]


def softmax(S):
    out = []
    for row in _rows(S):
        top = max(row)
        exps = [math.exp(s - top) for s in row]
        total = sum(exps)
        out.append([e / total for e in exps])
    return out


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        M = causal_mask(len(S))
        S = [[s + m for s, m in zip(srow, mrow)] for srow, mrow in zip(S, M)]
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return _matmul(attention_weights(Q, K, causal), V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(project(X, q), project(X, k), project(X, v), causal) for q, k, v in zip(W_Q, W_K, W_V)]
    concat = [sum((head[i] for head in heads), []) for i in range(len(heads[0]))]
    return _matmul(concat, W_O)
