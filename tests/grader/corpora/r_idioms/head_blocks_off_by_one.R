# Error in multi_head_attention: the columns ((h - 1) * d_v):(h * d_v) are one too many from the second head on.

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
  d_v <- ncol(W_V[[1]])
  C <- matrix(0, nrow(X), length(W_Q) * d_v)
  for (h in seq_along(W_Q)) {
    C[, ((h - 1) * d_v):(h * d_v)] <- attention_head(project(X, W_Q[[h]]), project(X, W_K[[h]]),
                                                     project(X, W_V[[h]]), causal)
  }
  C %*% W_O
}
