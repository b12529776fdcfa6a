# Hostile: prints 20 MB at load and in every call of project. Expected 30: the output is read and dropped.
cat(strrep("x", 2e7), "\n")
project_flood <- function() cat(strrep("y", 1e6))
