"""Caches: what the grader keeps on this machine between processes.

``machine_cache`` owns the cache directory and JAX's compilation cache under it; ``reference_cache`` stores
the labs' deterministic reference results there (``@cached_reference``), each an entry of
``reference_entry``, keyed by the hash of their sources (``source_hash``, which keys other verdicts kept
here too); ``warm`` computes them all ahead of a batch; ``shared_results`` is what the students'
package gets of them (``@shareable`` code, or stored results). The run reads the compilation cache; the
labs' references read and write here.
"""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.caches.machine_cache import cache_root, enable_compilation_cache, make_private_dirs
    from autograder.caches.reference_cache import CachedReference, cached_reference, source_hash
    from autograder.caches.shared_results import StoredResult, is_shareable, shareable, write_results
    from autograder.caches.warm import WarmResult, warm_lab, warm_labs

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
