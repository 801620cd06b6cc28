"""Grading: one notebook's grade, from the facts its run took.

``grade`` walks a submission through the stages (``submission`` reads it, the run executes it, and
``graders`` runs the lab's graders on each task's facts as it is taken); ``check_result`` and
``results`` are what a grade is made of; ``report`` prints it and ``feedback`` words it for the
student. The student's check and the course's batches take ``GradeResult`` from here.
"""
