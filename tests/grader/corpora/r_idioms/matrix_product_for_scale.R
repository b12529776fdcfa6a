# Error in scaled_scores: %*% (1 / sqrt(d_k)) where * or / is meant (non-conformable but for one column).

project <- function(X, W) {
  X %*% W
}

scaled_scores <- function(Q, K) {
  Q %*% t(K) %*% (1 / sqrt(ncol(Q)))
}

causal_mask <- function(n) {
  M <- matrix(0, n, n)
  M[upper.tri(M)] <- -Inf
  M
}

softmax <- function(S) {
  E <- exp(S - apply(S, 1, max))  # the row maxima recycle down the columns: row i shifted by its own
  E / rowSums(E)
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
