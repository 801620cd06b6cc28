"""The labs: for each, what to capture after each task and the pytest graders of its tasks.

Not a door: it exports no names. Each lab is a package of its own here (``captures``, ``reference``,
``test_<lab>.py``, an optional ``kernel_probe.py``), found by ``autograder.lab`` by its folder and
entered through its own ``__init__``.
"""
