"""Adversarial: imports the grader's own reference instead of writing the functions (expected 0)."""
from mha.reference import *  # noqa: F401,F403
