# Hostile: causal_mask never returns. Expected 27: only causal_mask's 3 points are lost (its other tests are
# not run after the first timeout; the other functions do not call it).
causal_mask <- function(n) repeat {}
