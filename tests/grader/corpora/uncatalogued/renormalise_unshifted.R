# Uncatalogued, value-dependent: softmax over the whole row (future scores included), then the 0/1 mask
# and the row renormalised. Exact on ordinary scores; where a future score dominates a row by more than
# ~745, every visible weight underflows to 0 and the row becomes 0/0 = NaN.

project <- function(X, W) {
  X %*% W
}

scaled_scores <- function(Q, K) {
  (Q %*% t(K)) / sqrt(ncol(Q))
}

causal_mask <- function(n) {
  M <- matrix(0, n, n)
  M[upper.tri(M)] <- -Inf
  M
}

softmax <- function(S) {
  E <- exp(S - apply(S, 1, max))
  E / rowSums(E)
}

attention_weights <- function(Q, K, causal = TRUE) {
  A <- softmax(scaled_scores(Q, K))
  if (causal) {
    A <- A * lower.tri(A, diag = TRUE)
    A <- A / rowSums(A)
  }
  A
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
