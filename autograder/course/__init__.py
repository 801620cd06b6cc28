"""The course: a class's term, built on one notebook's grade (docs/how-grading-works.md maps the modules).
The command line hands on to here.
"""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.course.adjustments import OverrideError, record_override
    from autograder.course.batch import BatchError, BatchOptions, run_batch
    from autograder.course.collect import CollectError, collect_submissions
    from autograder.course.dask_cluster import (
        GradingProgress,
        close_client,
        dask_client,
        grade_on_worker,
        last_gradings,
        warm_references,
    )
    from autograder.course.gradescope_run import (
        DEFAULT_ROOT,
        GRADESCOPE_LIMITS,
        HIDDEN_VISIBILITIES,
        ROOT_VARIABLE,
        GradescopeConfig,
        GradescopeError,
        run_gradescope,
    )
    from autograder.course.gradescope_zip import build_autograder_zip, try_zip
    from autograder.course.late import LatePolicyError, build_policy
    from autograder.course.lms_submissions import LmsError
    from autograder.course.similarity import SIMILARITY_FILE, find_similar, similarity_html
    from autograder.course.student_package import StudentPackageError, build_student_wheel

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
