"""The course: a class's term, built on one notebook's grade.

``collect`` finds the class's submissions, ``batch`` grades them (on this machine or a Dask cluster),
``gradebook`` keeps the grades, ``late``, ``overrides`` and ``adjustments`` change them as the course's
rules say, ``class_report`` sums them up, ``similarity`` compares submissions, and ``gradescope``
builds (and runs) the zip Gradescope grades with. The command line hands on to here.
"""
