"""Authoring: from a lab's solution notebook to the notebook students receive.

``markers`` reads the solution's task regions and answers, and ``assign`` writes the student's notebook,
with the cells that check a task from the notebook (``run/check_cells.py`` makes them, and the run's
plan recognises them). Nothing here runs a notebook.
"""
