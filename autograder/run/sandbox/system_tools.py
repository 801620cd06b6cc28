"""The system commands that start a sandboxed kernel as root (``prlimit``, ``setpriv``, ``env``,
``choom``), taken from the system's own folders, never from the caller's PATH.

The sandbox relies on util-linux's and coreutils' exact options (``setpriv --pdeathsig``, ``env -i``), run
as root before the kernel drops to its own uid. A command of the same name earlier in PATH (a folder of
tools, busybox, a PATH assembled by a script) would run as root in their place, or fail in a way that reads
as a sandbox fault. ``bwrap`` alone is looked up on PATH, as bubblewrap is an optional install an
administrator may place anywhere, and a PATH without it chooses the uid level.
"""

from __future__ import annotations

import functools
import os
import shutil

# Root-owned on every Linux distribution; /usr/local first, as a system's own PATH has it.
SYSTEM_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

# the Debian package of each command, for the message that says one is missing
PACKAGES = {"prlimit": "util-linux", "setpriv": "util-linux", "choom": "util-linux", "env": "coreutils"}


@functools.cache
def system_tool(name: str) -> str | None:
    """The absolute path of the system command ``name``, or None when the system has none."""
    return shutil.which(name, path=os.pathsep.join(SYSTEM_FOLDERS))


def system_tool_problem(name: str) -> str | None:
    """Why the system command ``name`` cannot be used, or None: missing, and where PATH has one of that
    name that is not the system's (which is not used)."""
    if system_tool(name) is not None:
        return None
    where = shutil.which(name)
    elsewhere = f" (PATH's `{where}` is not the system's, and is not used)" if where else ""
    return (
        f"`{name}` is not installed in the system's folders ({', '.join(SYSTEM_FOLDERS)}){elsewhere}: "
        f"install the Debian package {PACKAGES.get(name, name)}"
    )


def system_command(name: str) -> str:
    """The absolute path of the system command ``name``; raises ``FileNotFoundError`` saying why when
    there is none (callers have checked ``system_tool_problem`` first)."""
    path = system_tool(name)
    if path is None:
        raise FileNotFoundError(system_tool_problem(name))
    return path
