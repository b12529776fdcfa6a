# A correct submission with explicit loops, as a first R course writes them.

project <- function(X, W) {
  out <- matrix(0, nrow(X), ncol(W))
  for (i in seq_len(nrow(X))) {
    for (j in seq_len(ncol(W))) {
      out[i, j] <- sum(X[i, ] * W[, j])
    }
  }
  out
}

scaled_scores <- function(Q, K) {
  n <- nrow(Q)
  S <- matrix(0, n, nrow(K))
  for (i in seq_len(n)) {
    for (j in seq_len(nrow(K))) S[i, j] <- sum(Q[i, ] * K[j, ]) / sqrt(ncol(Q))
  }
  S
}

causal_mask <- function(n) {
  M <- matrix(0, n, n)
  for (i in seq_len(n)) {
    for (j in seq_len(n)) {
      if (j > i) M[i, j] <- -Inf
    }
  }
  return(M)
}

softmax <- function(S) {
  A <- S
  for (i in seq_len(nrow(S))) {
    e <- exp(S[i, ] - max(S[i, ]))
    A[i, ] <- e / sum(e)
  }
  return(A)
}

attention_weights <- function(Q, K, causal = TRUE) {
  S <- scaled_scores(Q, K)
  if (isTRUE(causal)) {
    S <- S + causal_mask(nrow(S))
  }
  softmax(S)
}

attention_head <- function(Q, K, V, causal = TRUE) {
  A <- attention_weights(Q, K, causal)
  out <- matrix(0, nrow(A), ncol(V))
  for (i in seq_len(nrow(A))) {
    for (j in seq_len(ncol(V))) out[i, j] <- sum(A[i, ] * V[, j])
  }
  out
}

multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, causal = TRUE) {
  concat <- NULL
  for (h in seq_along(W_Q)) {
    head <- attention_head(project(X, W_Q[[h]]), project(X, W_K[[h]]), project(X, W_V[[h]]), causal)
    concat <- cbind(concat, head)
  }
  project(concat, W_O)
}
