project <- function(X, W) X %*% W
scaled_scores <- function(Q, K) Q %*% t(K) / sqrt(ncol(Q))
mask_of <- function(n) {
  M <- matrix(0, n, n)
  M[upper.tri(M)] <- -Inf
  M
}
causal_mask <- function(n) mask_of(n)
softmax <- function(S) {
  E <- exp(S - apply(S, 1, max))
  E / rowSums(E)
}
attention_weights <- function(Q, K, causal = TRUE) {
  S <- scaled_scores(Q, K)
  if (causal) S <- S + mask_of(nrow(S))
  softmax(S)
}
attention_head <- function(Q, K, V, causal = TRUE) attention_weights(Q, K, causal) %*% V
multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, causal = TRUE) {
  do.call(cbind, lapply(seq_along(W_Q), function(i) attention_head(X %*% W_Q[[i]], X %*% W_K[[i]],
                                                                     X %*% W_V[[i]], causal))) %*% W_O
}
