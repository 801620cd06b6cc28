"""The sandbox's levels, each with the sentence a result shows for it; apart from bubblewrap.py so that a
result record names a level without loading the sandbox."""

from __future__ import annotations

BUBBLEWRAP, UID_SECCOMP, UID, NO_SANDBOX = "bubblewrap", "uid+seccomp", "uid", "none"
UID_SECCOMP_LANDLOCK, UID_LANDLOCK = "uid+seccomp+landlock", "uid+landlock"
LANDLOCK_LEVELS = (UID_SECCOMP_LANDLOCK, UID_LANDLOCK)
LEVEL_DESCRIPTIONS = {
    BUBBLEWRAP: "bubblewrap (own filesystem view, no network, own process tree, unprivileged uid)",
    UID_SECCOMP_LANDLOCK: "uid, network closed by seccomp, files limited by Landlock (an unprivileged uid of its "
    "own; reads only Python, its libraries and the system's, writes only its own directory; no IP or netlink "
    "sockets)",
    UID_LANDLOCK: "uid, network open, files limited by Landlock (an unprivileged uid of its own; reads only "
    "Python, its libraries and the system's, writes only its own directory; no seccomp filter here: only TCP "
    "is closed, by Landlock, where its ABI is 4 or more)",
    UID_SECCOMP: "uid, network closed by seccomp (an unprivileged uid of its own and file permissions: no "
    "Landlock in this OS kernel, so it reads what any user may; no IP or netlink sockets)",
    UID: "uid, network open (an unprivileged uid of its own and file permissions; no seccomp filter nor Landlock here)",
    NO_SANDBOX: "none (--no-sandbox: the notebook was trusted)",
}
