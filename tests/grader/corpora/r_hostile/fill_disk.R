# Hostile: writes files until the disk is full, in its working dir, /tmp and every folder it can name.
# Expected 30: the writes stop at the file size and /tmp limits, the statement at its time budget, and the
# functions are graded.
for (folder in c(getwd(), "/tmp", OUT, SUBMISSIONS)) {
  con <- try(file(file.path(folder, paste0("filler-", MARK)), "wb"), silent = TRUE)
  if (!inherits(con, "try-error")) for (i in 1:4096) writeBin(raw(2^20), con)
}
