"""Caches: what the grader keeps on this machine between processes.

``machine_cache`` owns the cache directory and JAX's compilation cache under it; ``reference_cache``
stores the labs' deterministic reference results there (``@cached_reference``); ``warm`` computes them
all ahead of a batch. The run reads the compilation cache; the labs' references read and write here.
"""
