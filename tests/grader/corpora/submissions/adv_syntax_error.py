"""Adversarial: does not parse (expected 0, with the line number)."""
import numpy as np


def project(X, W)
    return X @ W
