"""Lab 4, communication inside shard_map: its captures, reference and graders."""
