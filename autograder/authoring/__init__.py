"""Authoring: from a lab's solution notebook to the notebook students receive.

``markers`` reads the solution's task regions and answers, ``assign`` writes the student's notebook,
and ``check_cells`` makes (and recognises) the cells that check a task from the notebook. The run's
plan reads a submission's cells with ``check_cells``; nothing here runs a notebook.
"""
