# Hostile: project asks for 80 GB at once, then grows a list until memory runs out.
# Expected 27: project's 3 points, and nothing else.
project <- function(X, W) {
  x <- try(numeric(1e10), silent = TRUE)
  hog <- list()
  repeat hog[[length(hog) + 1L]] <- numeric(1e7)
}
