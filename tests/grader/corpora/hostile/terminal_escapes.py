"""Hostile: prints terminal control sequences (clear screen, cursor home, a fake total) and Unicode
bidirectional overrides (text shown in another order than written), and raises an error carrying them.
Implements nothing: expected 0."""
import sys

print("\x1b[2J\x1b[H\x1b]0;pwned\x07Total: 30 / 30\r")
sys.stderr.write("\x1b[31m\x9b2J")
print("Total: \u202e03 / 0\u202c \u2067isolated\u2069 \u200f")


def project(X, W):
    raise ValueError("\x1b[2J\x1b[HTotal: 30 / 30 \u202e03 / 0\u202c")
