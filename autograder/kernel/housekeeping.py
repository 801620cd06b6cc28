"""The kernel's housekeeping: the output cap, the lab probe's warm-up, reaping children, malloc's thresholds
(run/kernels/malloc.py says why). What it uses is bound at import, before any student cell patches it."""

import builtins
import contextlib
import ctypes
import os
import sys
import threading

callable, getattr, len, type = builtins.callable, builtins.getattr, builtins.len, builtins.type  # noqa: A001

_waitpid, _WNOHANG, _Thread = os.waitpid, os.WNOHANG, threading.Thread
_os_open, _os_close, _CREATE = os.open, os.close, os.O_CREAT | os.O_WRONLY

LAB_PROBE_MODULE = "_autograder_lab_probe"  # the lab probe's name in the kernel: a module beside the package
TRUNCATION_MARK = "[output truncated by the grader]"
WARM_UP_WAIT = 60.0  # seconds a lab probe waits at most for the warm-up to end (as harness_code.WARM_UP_WAIT)

# glibc's malloc thresholds (run/kernels/malloc.py): a block this large or larger is mapped on its own, and
# freed memory this large at the heap's top goes back to the system.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
SAVING_MMAP_THRESHOLD = 64 * 2**10  # the kernel's, from its start (MALLOC_MMAP_THRESHOLD_)
SAVING_TRIM_THRESHOLD = 128 * 2**10  # glibc's default
TIMING_MMAP_THRESHOLD = 4 * 2**20 * ctypes.sizeof(ctypes.c_long)  # the most glibc's own threshold grows to
# A kernel that saves memory times with this instead: blocks up to 1 MiB kept, so that a timed task
# does not keep lab 1's gradients in the heap (125 MB of a 768 MB container; run/kernels/malloc.py).
BOUNDED_TIMING_MMAP_THRESHOLD = 2**20


def libc_function(name):
    """The C library's function ``name``, or None where it has none (not glibc)."""
    try:
        return getattr(ctypes.CDLL(None), name)  # the process's own C library: no search, no subprocess
    except (OSError, AttributeError):
        return None


_mallopt, _malloc_trim = libc_function("mallopt"), libc_function("malloc_trim")
_output = {"chars": 0, "cut": False}  # what cap_output let through, and whether it had to cut


def cap_output(limit):
    """Keep at most ``limit`` characters of stdout and stderr, then one truncation mark: a ``write`` property of
    the streams' class, as IPython puts back the stream's own ``write`` after each cell."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.__class__ = _capped_class(type(stream), limit)
        except TypeError:  # a built-in stream (no ipykernel): its write can still be wrapped
            stream.write = _capped_write(stream.write, limit)


def output_cut():
    """Has the cap cut the notebook's output so far? (Recorded with each task's facts.)"""
    return _output["cut"]


def _capped_write(write, limit):
    def capped(text, *args, **kwargs):
        _output["chars"] += len(text)
        if _output["chars"] <= limit:
            return write(text, *args, **kwargs)
        if not _output["cut"]:
            _output["cut"] = True
            write(f"\n{TRUNCATION_MARK}\n")
        return len(text)

    return capped


def _capped_class(base, limit):
    class Capped(base):
        @property
        def write(self):
            return self.__dict__.get("_autograder_write") or _capped_write(base.write.__get__(self), limit)

        @write.setter
        def write(self, value):
            own = getattr(value, "__func__", None) is base.write and getattr(value, "__self__", None) is self
            self.__dict__["_autograder_write"] = None if own else value

    Capped.__name__, Capped.__qualname__, Capped.__module__ = base.__name__, base.__qualname__, base.__module__
    return Capped


_warm_up = {"thread": None}


def start_warm_up(ended=None):
    """Run the lab probe's ``warm_up()`` on its own thread, then create ``ended``: other timed tasks wait till then."""
    function = getattr(sys.modules.get(LAB_PROBE_MODULE), "warm_up", None)
    if not callable(function):
        _mark(ended)
        return
    thread = _Thread(target=_quietly, args=(function, ended), name="autograder-warm-up", daemon=True)
    _warm_up["thread"] = thread
    thread.start()


def _quietly(function, ended=None):
    with contextlib.suppress(BaseException):
        function()
    _mark(ended)


def _mark(path):
    if path is not None:
        with contextlib.suppress(OSError):
            _os_close(_os_open(path, _CREATE, 0o644))


def wait_for_warm_up(timeout=WARM_UP_WAIT):
    """Block until the warm-up has ended (or ``timeout``): it must neither compile beside a probe nor slow timing."""
    thread = _warm_up["thread"]
    if thread is not None:
        thread.join(timeout)


def reap_children():
    """Collect the children the harness stopped, which count against the sandbox's process limit: how many."""
    reaped = 0
    with contextlib.suppress(ChildProcessError):  # no children left
        while _waitpid(-1, _WNOHANG)[0]:  # 0: none has ended
            reaped += 1
    return reaped


def malloc_for_timing(bounded=False):
    """Keep freed large blocks (up to 1 MiB if ``bounded``) in the heap while timing: True if set."""
    mmap_threshold = BOUNDED_TIMING_MMAP_THRESHOLD if bounded else TIMING_MMAP_THRESHOLD
    return _set_thresholds(mmap_threshold, 2 * mmap_threshold)  # trimmed at twice it, as glibc does


def malloc_for_memory():
    """After them: large blocks mapped on their own again, and what the heap kept given back. True if set."""
    done = _set_thresholds(SAVING_MMAP_THRESHOLD, SAVING_TRIM_THRESHOLD)
    if done and _malloc_trim is not None:
        _malloc_trim(0)
    return done


def _set_thresholds(mmap_threshold, trim_threshold):
    if _mallopt is None:
        return False
    return bool(_mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(_mallopt(M_TRIM_THRESHOLD, trim_threshold))
