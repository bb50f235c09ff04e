"""numba's on-disk cache of compiled kernels, safe for processes that compile at once.

numba's cache (``numba.core.caching``) keeps, per kernel, an index file that
maps a signature to a numbered data file.  Saving a new signature reads the
index, takes the first free number, writes the index, then the data, with
no lock: two processes compiling two signatures of one kernel at once (the
test workers of ``pytest -n auto``, a Dask sweep's workers on a cold cache)
can both take number N; the index then names file N for one signature while
file N holds the other's code.  Every later process that asks for the first
signature loads the second: a compiled caller fails to type the call
("Invalid use of type(CPUDispatcher(...)) ... Known signatures"; a fresh-clone
test run failed 37 tests so), and a call from Python runs the wrong
specialization (``f(3)`` of ``x // 2`` returned ``1.0``, not ``1``).  The
race is numba's, open upstream (numba issue 4807 is the same family).

:class:`CheckedFunctionCache` closes it twice:

* a save holds an exclusive lock on the cache folder (:func:`folder_lock`)
  from reading the index to writing it, and writes the data file before the
  index names it, so two saves never share a number and an index never names
  a file not yet written;
* a load whose compiled signature is not the one asked for (a folder written
  before this fix, or by a process without it) is a miss: the kernel is
  compiled again and its save puts the right code in that file.

This module imports numba; :mod:`epochbench.instances.lazy` imports it only
when it makes the dispatchers, and gives each one with ``cache=True`` a
:class:`CheckedFunctionCache`.
"""

from __future__ import annotations

import contextlib
import itertools
import os

from numba.core import caching, sigutils

try:
    import fcntl
except ImportError:                           # Windows: no flock
    fcntl = None

#: the lock file in a cache folder that saves take in turn
LOCK_NAME = "epochbench-kernels.lock"


_HELD: dict = {}                              # descriptor of a lock file -> pid of the process holding it


def _forget_inherited_locks() -> None:
    """In a forked child: close the lock files held at the fork.  A
    ``flock`` belongs to the open file, which the child shares: the parent's
    lock stayed held until the child exited, and the child's own next save
    waited on it for good."""
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_inherited_locks)


@contextlib.contextmanager
def folder_lock(folder: str):
    """Hold an exclusive ``fcntl.flock`` on ``folder``'s :data:`LOCK_NAME`
    while the block runs (waiting for another process that holds it).
    Another user's lock file is opened for reading (``flock`` needs no
    more).  Where there is no ``fcntl`` (Windows), the file cannot be
    opened (a read-only folder) or the file system has no ``flock`` (some
    network file systems: ENOLCK), the block runs without a lock, as
    numba's own saves do."""
    fd = _open_lock_file(os.path.join(folder, LOCK_NAME))
    pid = os.getpid()
    try:
        if fd is not None:
            _HELD[fd] = pid
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:
                pass
        yield
    finally:
        if fd is not None and _HELD.get(fd) == pid:   # not one that a fork closed
            del _HELD[fd]
            os.close(fd)                      # closing the file releases the lock


def _open_lock_file(path: str) -> int | None:
    """A descriptor of the lock file ``path`` (made if missing), else None."""
    if fcntl is None:
        return None
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        pass
    except OSError:
        return None
    try:
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None


class LockedIndexDataCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files of one kernel, saved under
    :func:`folder_lock`, data file first."""

    def save(self, key, data):
        """Save the compiled code ``data`` of index key ``key``: its data
        file (the one the index names for ``key``, else the first number
        the index does not use), then the index."""
        with folder_lock(self._cache_path):
            overloads = self._load_index()
            name = overloads.get(key)
            if name is None:
                used = set(overloads.values())
                name = next(n for n in map(self._data_name, itertools.count(1)) if n not in used)
            self._save_data(name, data)
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)


def installed_roots() -> tuple:
    """The folders that packages are installed in (this interpreter's
    site-packages, the user's too), real paths."""
    import site
    import sysconfig
    paths = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")}
    try:
        paths.update(site.getsitepackages())
        paths.add(site.getusersitepackages())
    except AttributeError:                    # a virtualenv's old site.py has neither
        pass
    return tuple(sorted(os.path.realpath(p) for p in paths if p))


#: the folders of :func:`installed_roots` (a test may set others)
INSTALLED_ROOTS: tuple | None = None


def is_installed(py_file: str) -> bool:
    """Whether ``py_file`` lies in a folder packages are installed in."""
    global INSTALLED_ROOTS
    if INSTALLED_ROOTS is None:
        INSTALLED_ROOTS = installed_roots()
    path = os.path.realpath(py_file)
    return any(path.startswith(root + os.sep) for root in INSTALLED_ROOTS)


class InTreeUnlessInstalled(caching.InTreeCacheLocator):
    """numba's ``__pycache__`` beside the kernel's source, for a source out
    of site-packages (a checkout, an editable install) only.  An installed
    package keeps no file of its own in its folders, so that ``pip
    uninstall`` takes them all: the kernels left behind kept the folder,
    and ``import epochbench`` then found an empty namespace package, not an
    ImportError.  Its kernels go to the user's cache (numba's next
    locator)."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if is_installed(py_file):
            return None
        return super().from_function(py_func, py_file)


class CheckedCacheImpl(caching.CompileResultCacheImpl):
    """numba's way of keeping compile results, in the folder of the first
    locator that takes the kernel: ``NUMBA_CACHE_DIR``,
    :class:`InTreeUnlessInstalled`, then numba's others (the user cache)."""

    _locator_classes = [{caching.InTreeCacheLocator: InTreeUnlessInstalled}.get(c, c)
                        for c in caching.CompileResultCacheImpl._locator_classes]


class CheckedFunctionCache(caching.FunctionCache):
    """numba's ``FunctionCache`` with locked saves
    (:class:`LockedIndexDataCacheFile`) and checked loads: a cached
    compilation whose signature is not the one asked for is not used; the
    folder is chosen by :class:`CheckedCacheImpl`."""

    _impl_class = CheckedCacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = LockedIndexDataCacheFile(
            cache_path=self._cache_path, filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp())

    def _load_overload(self, sig, target_context):
        cres = super()._load_overload(sig, target_context)
        if cres is not None and not same_arguments(sig, cres.signature):
            return None
        return cres


def same_arguments(asked, compiled) -> bool:
    """Whether the argument types of signature ``compiled`` are those of
    ``asked`` (a signature or a tuple of argument types)."""
    args, _ = sigutils.normalize_signature(asked)
    return tuple(args) == tuple(compiled.args)

