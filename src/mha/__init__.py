"""Masked multi-head attention for the course: reference math, worked example, data, model, training."""

__version__ = "0.1.0"
