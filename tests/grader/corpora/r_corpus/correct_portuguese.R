# Solução da questão 1 com nomes em português e acentos nos comentários (atenção, máscara).
rm(list = ls())
library(stats)

projetar <- function(entrada, pesos) entrada %*% pesos
transpor <- function(matriz) t(matriz)

project <- function(X, W) projetar(X, W)

scaled_scores <- function(Q, K) {
  dimensão <- ncol(Q)
  Q %*% transpor(K) / sqrt(dimensão)
}

causal_mask <- function(n) {
  máscara <- matrix(0, n, n)
  máscara[upper.tri(máscara)] <- -Inf
  máscara
}

softmax <- function(S) {
  linhas <- lapply(seq_len(nrow(S)), function(i) {
    exponenciais <- exp(S[i, ] - max(S[i, ]))
    exponenciais / sum(exponenciais)
  })
  do.call(rbind, linhas)
}

attention_weights <- function(Q, K, causal = TRUE) {
  escores <- scaled_scores(Q, K)
  if (causal) escores <- escores + causal_mask(nrow(escores))
  softmax(escores)
}

attention_head <- function(Q, K, V, causal = TRUE) attention_weights(Q, K, causal) %*% V

multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, causal = TRUE) {
  cabeças <- lapply(seq_along(W_Q), function(i) {
    attention_head(projetar(X, W_Q[[i]]), projetar(X, W_K[[i]]), projetar(X, W_V[[i]]), causal)
  })
  do.call(cbind, cabeças) %*% W_O
}

# Um teste rápido, como no caderno do curso
X <- matrix(rnorm(12), 3, 4)
print(dim(project(X, matrix(1, 4, 2))))
