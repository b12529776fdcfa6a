# Hostile: forks until it cannot, each child spinning forever (parallel is one of R's base packages).
# Expected 30: the forks die with the submission, and the functions after them are graded.
for (i in 1:200) {
  ok <- try(parallel::mcparallel(repeat {}), silent = TRUE)
  if (inherits(ok, "try-error")) break
}
