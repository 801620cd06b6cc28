"""Lab 2, "three ways to parallelize": its captures, reference and graders."""
