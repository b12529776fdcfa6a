# What a student's RStudio session leaves in the file: every one of these lines fails (or hangs) where grading runs.
install.packages("ggplot2")
library(ggplot2)
setwd("C:/Users/aluno/Documents/atencao")
while (TRUE) {}  # an experiment left running at the top level
system("ls /")
dados <- read.csv("dados.csv")
View(dados)

project <- function(X, W) X %*% W
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
attention_weights <- function(Q, K, causal = TRUE) {
  S <- scaled_scores(Q, K)
  if (causal) S <- S + causal_mask(nrow(S))
  softmax(S)
}
q("no")
attention_head <- function(Q, K, V, causal = TRUE) attention_weights(Q, K, causal) %*% V
multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, causal = TRUE) {
  heads <- lapply(seq_along(W_Q), function(i) attention_head(X %*% W_Q[[i]], X %*% W_K[[i]], X %*% W_V[[i]], causal))
  do.call(cbind, heads) %*% W_O
}
