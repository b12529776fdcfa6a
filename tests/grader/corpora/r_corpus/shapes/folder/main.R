source("utils.R")

project <- function(X, W) X %*% W
scaled_scores <- function(Q, K) Q %*% t(K) / sqrt(ncol(Q))
attention_weights <- function(Q, K, causal = TRUE) {
  S <- scaled_scores(Q, K)
  if (causal) S <- S + causal_mask(nrow(S))
  softmax(S)
}
attention_head <- function(Q, K, V, causal = TRUE) attention_weights(Q, K, causal) %*% V
multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, causal = TRUE) {
  heads <- lapply(seq_along(W_Q), function(i) attention_head(X %*% W_Q[[i]], X %*% W_K[[i]], X %*% W_V[[i]], causal))
  do.call(cbind, heads) %*% W_O
}
