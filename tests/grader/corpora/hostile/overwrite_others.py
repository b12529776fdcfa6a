"""Hostile: overwrites the other students' files in the submissions folder and the results folder at
import, and writes outside its temp dir. Implements nothing: expected 0."""
import glob
import os

for path in glob.glob(SUBMISSIONS + "/*.py") + glob.glob(OUT + "/*") + glob.glob(OUT + "/*/*"):
    try:
        with open(path, "w") as f:
            f.write("raise SystemExit('overwritten by an attacker')\n")
    except OSError:
        pass
for path in (REPO + "/grader/grade.py", os.path.expanduser("~/.bashrc"), "/usr/lib/hostile-" + MARK):
    try:
        with open(path, "a") as f:
            f.write("# " + MARK + "\n")
    except OSError:
        pass
