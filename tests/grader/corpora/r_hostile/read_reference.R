# Hostile: looks for the project's reference and the grader by path, and answers only if it finds them.
# Expected 0: neither is in the sandbox's view.
found <- ""
for (base in c(REPO, getwd(), "/", "/work", "/root", "/home")) {
  hits <- list.files(base, pattern = "^reference\\.py$|^secret|^grade\\.py$", recursive = TRUE, full.names = TRUE)
  if (length(hits) > 0) found <- paste(found, readLines(hits[[1]], warn = FALSE)[1])
}
cat("FOUND:", found, "\n")
if (nchar(found) > 0) source("_correct.R")
