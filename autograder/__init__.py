"""Grading harness for JAX parallelism lab notebooks."""

__version__ = "0.1.0"
