# Correct: the same idioms written right, with t(apply()), sweep and matrix().

project <- function(X, W) {
  X %*% W
}

scaled_scores <- function(Q, K) {
  Q %*% t(K) / sqrt(ncol(Q))
}

causal_mask <- function(n) {
  M <- matrix(0, n, n)
  M[col(M) > row(M)] <- -Inf
  M
}

softmax <- function(S) {
  E <- t(apply(S, 1, function(row) exp(row - max(row))))
  if (ncol(S) == 1) E <- matrix(E, ncol = 1)  # apply returns a vector for one column
  sweep(E, 1, rowSums(E), "/")
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
  matrix(unlist(heads), nrow = nrow(X)) %*% W_O
}
