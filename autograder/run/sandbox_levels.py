"""The sandbox's levels, each with the sentence a result shows for it.

Apart from ``sandbox.py`` so that a result record (``grading/results.py``) names a level without loading
the sandbox and its network filter.
"""

from __future__ import annotations

BUBBLEWRAP, UID_SECCOMP, UID, NO_SANDBOX = "bubblewrap", "uid+seccomp", "uid", "none"
LEVEL_DESCRIPTIONS = {
    BUBBLEWRAP: "bubblewrap (own filesystem view, no network, own process tree, unprivileged uid)",
    UID_SECCOMP: "uid, network closed by seccomp (an unprivileged uid of its own and file permissions; "
    "no IP or netlink sockets)",
    UID: "uid, network open (an unprivileged uid of its own and file permissions; no seccomp filter here)",
    NO_SANDBOX: "none (--no-sandbox: the notebook was trusted)",
}
