"""Authoring, for the TA: from a lab's solution notebook to the notebook students receive, and new labs.

``markers`` reads the solution's task regions and answers, and ``assign`` writes the student's notebook,
with the cells that check a task from the notebook (``run/check_cells.py`` makes them, and the run's
plan recognises them); ``assign_verification`` grades what ``assign`` wrote (solution full marks, blank
notebook zero) before it is handed out. ``new_lab`` scaffolds a lab that runs (solution notebook,
captures, reference, graders, known-grade submissions), opening with ``setup_cell``, every lab's first
cell. Above grading, which it uses.
"""
