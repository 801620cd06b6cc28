"""``import autograder.notebook as ag``: the name notebooks assigned before the self-check's package
was called ``autograder.self_check`` import. It is that same module, so those notebooks keep checking."""

import sys

import autograder.self_check

sys.modules[__name__] = autograder.self_check
