"""The labs: for each, what to capture after each task and the pytest graders of its tasks."""
