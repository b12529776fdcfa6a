"""Hostile: writes files until the disk is full, in its temp dir, its working dir and every folder it
can name. Implements nothing: expected 0."""
import os

for folder in (os.getcwd(), "/tmp", OUT, SUBMISSIONS):
    try:
        with open(os.path.join(folder, "filler-" + MARK), "wb") as f:
            for _ in range(4096):
                f.write(b"\0" * (1 << 20))
    except OSError:
        pass
