"""Test session setup: 8 virtual CPU devices for the grader-side JAX, as the harness uses."""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("PJRT_NPROC", "16")
