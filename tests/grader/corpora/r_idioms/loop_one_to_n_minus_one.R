# Mistake [loop-skips-last-row] in softmax: for (i in 1:nrow(S)-1) is for (i in (1:nrow(S)) - 1), rows 0 to n - 1.

project <- function(X, W) {
  X %*% W
}

scaled_scores <- function(Q, K) {
  tcrossprod(Q, K) / sqrt(ncol(Q))
}

causal_mask <- function(n) {
  M <- matrix(0, n, n)
  M[upper.tri(M)] <- -Inf
  M
}

softmax <- function(S) {
  A <- S
  for (i in 1:nrow(S)-1) {
    e <- exp(S[i, ] - max(S[i, ]))
    A[i, ] <- e / sum(e)
  }
  A
}

attention_weights <- function(Q, K, causal = TRUE) {
  S <- scaled_scores(Q, K)
  if (causal) S <- S + causal_mask(nrow(S))
  softmax(S)
}

attention_head <- function(Q, K, V, causal = TRUE) {
  attention_weights(Q, K, causal) %*% V
}

multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, causal = TRUE) {
  heads <- lapply(seq_along(W_Q), function(i) {
    attention_head(project(X, W_Q[[i]]), project(X, W_K[[i]]), project(X, W_V[[i]]), causal)
  })
  do.call(cbind, heads) %*% W_O
}
