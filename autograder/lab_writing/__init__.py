"""For the TA who writes a lab: ``new_lab`` scaffolds one that runs (solution notebook, captures,
reference, graders, known-grade submissions); ``assign_verification`` grades what ``assign`` wrote
(solution full marks, blank notebook zero) before it is handed out. Above grading, which it uses."""
