"""Lab 1, "distributed arrays and automatic parallelization": its captures, reference and graders."""
