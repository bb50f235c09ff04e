"""The compiled kernels' on-disk cache when several processes fill it at
once (instances/kernel_cache.py).  numba's own save reads a kernel's index,
takes the first free data-file number and writes the index, with no lock:
two processes could both take number N, and the index then named for one
signature the file holding the other's code.  A fresh-clone test run
(``pytest -n auto``) so failed 37 tests: ``_room`` of sim/profile.py was
loaded with another signature's code ("Invalid use of type(CPUDispatcher
(...)) ... Known signatures")."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from _processes import python_child, wait_for

_KERNEL = '''from epochbench.instances.lazy import njit


@njit(cache=True)
def half(x):
    return x // 2
'''

# a save that takes some time between reading the index and writing it: two processes that save at once
# both read it before either writes
_SLOW_INDEX = '''
import sys, time
sys.path.insert(0, sys.argv[1])
import pathlib
from numba.core import caching
read = caching.IndexDataCacheFile._load_index
def slow(self):
    found = read(self)
    time.sleep(1.0)
    return found
caching.IndexDataCacheFile._load_index = slow
from kmod import half
half.compiled()                              # numba loaded: only the compilation is left
pathlib.Path(sys.argv[2], "ready-" + sys.argv[3]).touch()
while not pathlib.Path(sys.argv[2], "go").exists():     # both processes compile at once
    time.sleep(0.005)
print(repr(half(int(sys.argv[3]) if sys.argv[3] == "3" else float(sys.argv[3]))))
'''

_BOTH = '''
import sys
sys.path.insert(0, sys.argv[1])
from kmod import half
print(repr(half(3)), repr(half(3.0)), sum(half.stats.cache_misses.values()))
'''


def _module(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    (tmp_path / "kmod.py").write_text(_KERNEL)


def _data_files(tmp_path) -> list:
    return sorted((tmp_path / "cache").rglob("kmod.half-*.nbc"))


def test_two_processes_saving_two_signatures_at_once_take_two_data_files(tmp_path, monkeypatch):
    """Both processes read the empty index before either writes it; the
    second waits for the first's lock and so takes data file 2, and a third
    process loads both signatures from the cache (no compilation) with their
    own code (x // 2 of an int is an int)."""
    _module(tmp_path, monkeypatch)
    procs = [subprocess.Popen([sys.executable, "-c", _SLOW_INDEX, str(tmp_path), str(tmp_path), arg],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for arg in ("3", "3.0")]
    try:
        wait_for(lambda: all((tmp_path / f"ready-{a}").exists() or p.poll() is not None
                             for a, p in zip(("3", "3.0"), procs)), 120, "both processes ready")
    finally:
        (tmp_path / "go").touch()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    assert [out.strip() for out, _ in outs] == ["1", "1.0"]
    assert len(_data_files(tmp_path)) == 2
    assert python_child(_BOTH, str(tmp_path)) == "1 1.0 0"


def test_a_cached_file_of_another_signature_is_not_used(tmp_path, monkeypatch):
    """A cache written before the lock, whose index names for the int
    signature the file of the float one (and the other way round): the int
    call ran the float code and returned 1.0.  Such a load is a miss; the
    kernel is compiled again, and its save mends the file."""
    _module(tmp_path, monkeypatch)
    assert python_child(_BOTH, str(tmp_path)) == "1 1.0 2"
    one, two = _data_files(tmp_path)
    a, b = one.read_bytes(), two.read_bytes()
    one.write_bytes(b)
    two.write_bytes(a)
    assert python_child(_BOTH, str(tmp_path)) == "1 1.0 2"
    assert python_child(_BOTH, str(tmp_path)) == "1 1.0 0"


def test_a_cache_folder_another_process_just_emptied_is_not_emptied_again(tmp_path, monkeypatch):
    """Two processes that start at once both read the old stamp; the second
    to take the folder's lock found it emptied and stamped by the first, and
    emptied it again, with the kernels that the first had saved meanwhile
    (every test worker of a cold run compiled them once more)."""
    import contextlib
    import types

    from epochbench.instances import kernel_cache, lazy
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / lazy.STAMP).write_text("old")
    saved = folder / "k.f-1.py311.nbi"

    @contextlib.contextmanager
    def lock_taken_after_the_other_process(path):
        (folder / lazy.STAMP).write_text(lazy.kernel_sources_digest())     # the other process's work
        saved.write_bytes(b"a kernel it saved")
        yield
    monkeypatch.setattr(kernel_cache, "folder_lock", lock_taken_after_the_other_process)
    monkeypatch.setattr(lazy, "_CHECKED", set())
    lazy._fresh_cache(types.SimpleNamespace(_cache=types.SimpleNamespace(cache_path=str(folder))))
    assert saved.exists()
    (folder / lazy.STAMP).write_text("old")                                   # a stale folder is emptied
    monkeypatch.setattr(kernel_cache, "folder_lock", lambda path: contextlib.nullcontext())
    monkeypatch.setattr(lazy, "_CHECKED", set())
    lazy._fresh_cache(types.SimpleNamespace(_cache=types.SimpleNamespace(cache_path=str(folder))))
    assert not saved.exists() and (folder / lazy.STAMP).read_text() == lazy.kernel_sources_digest()


_INSTALLED = '''
import sys
sys.path.insert(0, sys.argv[1])
from epochbench.instances import kernel_cache
kernel_cache.INSTALLED_ROOTS = (sys.argv[1],)      # kmod.py as if it lay in site-packages
from kmod import half
print(repr(half(3)), half.stats.cache_path)
'''


def test_an_installed_package_keeps_its_compiled_kernels_in_the_user_cache(tmp_path, monkeypatch):
    """The kernels of a package installed in site-packages were cached in
    its own __pycache__ folders: ``pip uninstall`` left those folders, and
    ``import epochbench`` then found an empty namespace package instead of
    failing.  They go to the user's cache; a checkout's stay beside it."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    site = tmp_path / "site"
    site.mkdir()
    (site / "kmod.py").write_text(_KERNEL)
    value, folder = python_child(_INSTALLED, str(site)).split(" ", 1)
    assert value == "1" and folder.startswith(str(tmp_path / "user-cache"))
    assert sorted(p.name for p in site.rglob("*") if p.is_file()) == ["kmod.py"]
    assert list((tmp_path / "user-cache").rglob("kmod.half-*.nbi"))
    out = python_child(_INSTALLED.replace("(sys.argv[1],)", "()"), str(site))
    assert out == f"1 {site / '__pycache__'}" and list((site / "__pycache__").glob("kmod.half-*.nbi"))


def _locked_elsewhere(path) -> bool:
    """Another open file of ``path`` cannot take its lock now."""
    import fcntl
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_the_folder_lock_is_taken_on_another_users_file_and_skipped_where_there_is_no_flock(tmp_path, monkeypatch):
    """Another user's lock file (0644) could not be opened for writing, and
    the save ran without the lock; a file system without ``flock`` (ENOLCK,
    some network file systems) made every kernel not yet cached fail to
    compile, where numba's own save simply took no lock."""
    import errno
    import fcntl

    from epochbench.instances import kernel_cache
    lock = tmp_path / kernel_cache.LOCK_NAME
    lock.touch()
    real_open = os.open

    def not_mine(path, flags, *args):
        if str(path) == str(lock) and flags & os.O_RDWR:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)
    monkeypatch.setattr(os, "open", not_mine)
    with kernel_cache.folder_lock(str(tmp_path)):
        monkeypatch.setattr(os, "open", real_open)
        assert _locked_elsewhere(lock)
    assert not _locked_elsewhere(lock)

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")
    monkeypatch.setattr(fcntl, "flock", no_locks)
    ran = []
    with kernel_cache.folder_lock(str(tmp_path)):
        ran.append(1)
    assert ran == [1]


def test_a_child_forked_while_a_thread_holds_the_folder_lock_does_not_keep_it(tmp_path):
    """A flock belongs to the open file, which a forked child shares: the
    parent's lock stayed held until the child exited, and the child's own
    save waited on it for good."""
    from epochbench.instances import kernel_cache
    held, release = threading.Event(), threading.Event()

    def hold():
        with kernel_cache.folder_lock(str(tmp_path)):
            held.set()
            release.wait(30)
    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(30)
    pid = os.fork()
    if pid == 0:                                                     # the child: a save of its own
        try:
            with kernel_cache.folder_lock(str(tmp_path)):
                (tmp_path / "child-saved").touch()
        finally:
            os._exit(0)
    time.sleep(0.5)
    release.set()
    holder.join(30)
    try:
        wait_for(lambda: (tmp_path / "child-saved").exists(), 30, "the child's save")
    finally:
        if os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    assert not _locked_elsewhere(tmp_path / kernel_cache.LOCK_NAME)
