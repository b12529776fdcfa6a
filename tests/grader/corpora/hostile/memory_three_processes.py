"""Hostile: three processes each take memory up to the per-process cap (beats a per-process limit
alone), then the parent keeps going. Implements nothing: expected 0."""
import os
import time

children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        hog = []
        try:
            while True:
                hog.append(bytearray(64 * 1024 * 1024))
        except MemoryError:
            time.sleep(60)
        os._exit(0)
    children.append(pid)
time.sleep(1)
