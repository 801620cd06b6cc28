"""Lab 3, "FSDP and tensor parallelism": its captures, reference and graders."""
