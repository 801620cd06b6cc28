"""Caches: what the grader keeps on this machine between processes: JAX's compilation cache and the labs'
reference results, which the students' package gets as code or stored results (docs/how-grading-works.md
maps the modules)."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.caches.machine_cache import cache_root, enable_compilation_cache, make_private_dirs
    from autograder.caches.reference_cache import CachedReference, cached_reference, source_hash
    from autograder.caches.shared_results import StoredResult, is_shareable, shareable, write_results
    from autograder.caches.warm import WarmResult, warm_lab, warm_labs

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
