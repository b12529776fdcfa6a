# Hostile: SIGKILL to every pid it can name, its own included, at load. Implements nothing: expected 0.
try(tools::pskill(seq_len(4000), 9L))
try(tools::pskill(seq_len(4000), 19L))
