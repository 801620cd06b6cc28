"""The student's check: ``ag.check("tN")`` from the notebook, graded by the same graders as the course.

``checker_process`` starts (once) a separate process with the grader's devices, ``task_checker`` runs
in it and grades the task from the notebook's live values, and ``inline_report`` turns the result into
what the notebook shows. ``autograder.notebook`` is the door students use; it hands calls on to here.
"""
