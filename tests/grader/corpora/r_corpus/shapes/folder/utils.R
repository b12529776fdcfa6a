# Helpers sourced by main.R
softmax <- function(S) {
  E <- exp(S - apply(S, 1, max))
  E / rowSums(E)
}
causal_mask <- function(n) {
  M <- matrix(0, n, n)
  M[upper.tri(M)] <- -Inf
  M
}
