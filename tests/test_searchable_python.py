"""The suite's holds on the folders above Python (tests/support/searchable_python.py) can fail: a folder
made searchable stays so while any session still holds it, and only the last to let go puts its mode
back, even when an earlier holder died without letting go."""

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import searchable_python
from searchable_python import Searchable


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_mode_comes_back_only_when_the_last_holder_lets_go(tmp_path):
    private, state = tmp_path / "private", tmp_path / "state"
    private.mkdir(mode=0o700)
    state.mkdir()
    first = Searchable([private], state)
    assert _mode(private) == 0o701
    second = Searchable([private], state)  # another session: nothing for it to change
    first.release()
    assert _mode(private) == 0o701  # the second still needs it: its kernels are starting
    second.release()
    assert _mode(private) == 0o700


def test_a_holder_that_dies_without_letting_go_does_not_keep_the_mode_forever(tmp_path):
    private, state = tmp_path / "private", tmp_path / "state"
    private.mkdir(mode=0o700)
    state.mkdir()
    dying = textwrap.dedent(f"""
        import os, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(searchable_python.__file__).parent)!r})
        from searchable_python import Searchable
        Searchable([Path({str(private)!r})], Path({str(state)!r}))
        os._exit(0)  # without letting go
    """)
    subprocess.run([sys.executable, "-c", dying], check=True)
    assert _mode(private) == 0o701  # it never let go...
    later = Searchable([private], state)
    later.release()
    assert _mode(private) == 0o700  # ...and the next last holder put the mode it noted back
