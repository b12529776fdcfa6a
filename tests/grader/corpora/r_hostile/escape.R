# Hostile: system(), system2(), .Internal(system()) and pskill against the grader, the batch's files and the
# network; every function is correct. Expected 30: none of it reaches outside the submission.
try(system(paste("touch", file.path(SUBMISSIONS, "pwned"))))
try(system2("sh", c("-c", "kill -9 -1")))
try(.Internal(system(paste0("echo ", MARK, " > ", file.path(OUT, "pwned"), "; echo ", MARK, " >> ",
                            file.path(REPO, "grader", "grade.py"), "; touch /usr/lib/hostile-", MARK), FALSE, 0)))
try(writeLines(MARK, file.path(SUBMISSIONS, "ok_r.R")))
try(socketConnection("127.0.0.1", PORT, blocking = TRUE, timeout = 1))
try(url(paste0("http://127.0.0.1:", PORT, "/"), open = "r"))
try(Sys.setenv(R_LIBS = "/tmp"))
