"""The system commands that start a sandboxed kernel as root (``prlimit``, ``setpriv``, ``env``, ``choom``),
taken from the system's own folders, never from PATH: a command of that name earlier in PATH would run as
root in their place. ``bwrap`` alone is looked up on PATH, an optional install placed anywhere."""

from __future__ import annotations

import functools
import os
import shutil

# Root-owned on every Linux distribution; /usr/local first, as a system's own PATH has it.
SYSTEM_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

PACKAGES = {"prlimit": "util-linux", "setpriv": "util-linux", "choom": "util-linux", "env": "coreutils"}


@functools.cache
def system_tool(name: str) -> str | None:
    return shutil.which(name, path=os.pathsep.join(SYSTEM_FOLDERS))


def system_tool_problem(name: str) -> str | None:
    if system_tool(name) is not None:
        return None
    where = shutil.which(name)
    elsewhere = f" (PATH's `{where}` is not the system's, and is not used)" if where else ""
    return (
        f"`{name}` is not installed in the system's folders ({', '.join(SYSTEM_FOLDERS)}){elsewhere}: "
        f"install the Debian package {PACKAGES.get(name, name)}"
    )


def system_command(name: str) -> str:
    path = system_tool(name)
    if path is None:
        raise FileNotFoundError(system_tool_problem(name))
    return path
