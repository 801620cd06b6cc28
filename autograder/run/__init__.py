"""The run: a submission's cells executed in a sandboxed kernel, task by task, with its facts taken.

``plan`` splits the notebook into tasks (leaving out the cells ``check_cells`` marks as the student's
own checks, which ``assign`` adds); ``sandbox``, ``kernel`` and ``devices`` start a kernel the
student's code cannot escape, on the grader's devices; ``execute`` runs the cells and has the probe
write each task's facts (``live_execution`` hands each task over as soon as it is taken); ``leftovers``
stops what a cell left running, ``quiet`` keeps the grader's timings away from running student code, and
``kernel_pool`` starts the next kernel ahead. Grading reads what the run hands on: each task's facts.
"""
