# A correct submission with sweep(), outer(), tcrossprod() and rowSums(); the weights come back as a data.frame.

project <- function(X, W) X %*% W

scaled_scores <- function(Q, K) tcrossprod(Q, K) / sqrt(ncol(Q))

causal_mask <- function(n) {
  ifelse(outer(seq_len(n), seq_len(n), "<"), -Inf, 0)
}

softmax <- function(S) {
  shifted <- sweep(S, 1, apply(S, 1, max))
  E <- exp(shifted)
  sweep(E, 1, rowSums(E), "/")
}

attention_weights <- function(Q, K, causal = TRUE) {
  S <- scaled_scores(Q, K)
  if (causal) S <- S + causal_mask(nrow(Q))
  as.data.frame(softmax(S))
}

attention_head <- function(Q, K, V, causal = TRUE) {
  as.matrix(attention_weights(Q, K, causal)) %*% V
}

multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, causal = TRUE) {
  heads <- Map(function(wq, wk, wv) attention_head(X %*% wq, X %*% wk, X %*% wv, causal), W_Q, W_K, W_V)
  Reduce(cbind, heads) %*% W_O
}
