"""The suite's own guard against a hung test (``conftest.hard_stop``).

pytest-timeout's signal cannot stop a compiled kernel that loops forever
while holding the GIL; the guard must end such a process anyway, with the
tracebacks that say where it was.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

TESTS = os.path.dirname(os.path.abspath(__file__))

SPIN = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {TESTS!r})
    from numba import njit
    from conftest import hard_stop

    @njit(cache=False)
    def spin(n):          # holds the GIL for ever: no Python handler can run
        x = 0
        while n > 0:
            x = (x * 7 + 1) % 1000003
        return x

    spin.compile("(int64,)")
    print("spinning", flush=True)
    hard_stop(2.0)
    spin(1)
    print("not reached")
""")


def test_a_kernel_that_never_returns_is_stopped_with_its_traceback():
    proc = subprocess.run([sys.executable, "-c", SPIN], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and proc.stdout.split() == ["spinning"], (proc.stdout, proc.stderr[-2000:])
    assert proc.stderr.startswith("Timeout (0:00:02)!") and 'File "<string>"' in proc.stderr, proc.stderr[-2000:]


def test_the_hard_stop_writes_where_pytest_does_not_capture(request):
    """With pytest capturing file descriptor 2, a stop's tracebacks went to
    the capture's temporary file, which dies with the process: nothing was
    printed.  The stop writes to the saved copy of the real stderr."""
    from conftest import _real_stderr
    fd = _real_stderr(request.config)
    if request.config.getoption("capture") == "fd":
        assert fd != 2 and os.path.sameopenfile(fd, fd) and not os.path.samestat(os.fstat(fd), os.fstat(2))
    else:
        assert fd == 2
