"""Modules imported on first use: :func:`lazy_module`.

The solver back-ends (OR-Tools, HiGHS, PuLP, SciPy) take most of a second
to import.  A module that registers exact methods names them through
:func:`lazy_module`, so that listing or registering methods, or running a
simulation that never solves exactly, does not import them.  Likewise
numba: kernels are defined with :func:`njit`, which imports numba only when
a kernel is first called.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import threading
import types
from types import ModuleType


class LazyModule:
    """Stands for module ``name``; the first attribute read imports it.

    Parameters
    ----------
    name : str
        The module's full dotted name, as ``import`` takes it.

    Notes
    -----
    After the first access the real module is kept, so each later attribute
    read costs one extra Python call.  Use it for module objects only:
    ``from ... import name`` of a function or class still imports at once.
    """

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def load(self) -> ModuleType:
        """The real module (imported now if it was not yet)."""
        module = object.__getattribute__(self, "_module")
        if module is None:
            module = import_module(object.__getattribute__(self, "_name"))
            object.__setattr__(self, "_module", module)
        return module

    def __getattr__(self, attr: str):
        return getattr(self.load(), attr)

    def __repr__(self) -> str:
        state = "loaded" if object.__getattribute__(self, "_module") is not None else "not loaded"
        return f"<lazy module {object.__getattribute__(self, '_name')!r} ({state})>"


#: modules whose import loads a compiled extension inside a bare ``except``
#: (PuLP: ``try: import highspy except: ...``), where a Ctrl-C would be
#: swallowed: :func:`import_module` loads those first, itself (when installed)
_LOADS_QUIETLY = {"pulp": ("highspy",)}


def import_module(name: str) -> ModuleType:
    """``importlib.import_module(name)``, where a Ctrl-C that lands while the
    module initialises stays a ``KeyboardInterrupt`` (:func:`interrupt_behind`):
    how the solver back-ends are loaded (:class:`LazyModule`, the methods'
    warm-ups).  What the module would load inside a bare ``except``
    (:data:`_LOADS_QUIETLY`) is loaded first, the same way."""
    for first in _LOADS_QUIETLY.get(name.partition(".")[0], ()):
        if first not in sys.modules and importlib.util.find_spec(first) is not None:
            import_module(first)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise interrupt_behind(exc) or exc


def interrupt_behind(exc: BaseException) -> BaseException | None:
    """The ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM as the command line
    raises it) that ``exc`` was raised from, if any, else None.  A
    compiled extension built with pybind11 (OR-Tools' CP-SAT, highspy)
    turns a Ctrl-C that lands while it initialises into
    ``ImportError("initialization failed")`` raised from it: read as the
    solver's failure, a command went on solving, recorded its run as failed
    and exited 1 (a review of interrupted runs)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def lazy_module(name: str) -> LazyModule:
    """A :class:`LazyModule` for ``name``: ``cp_model = lazy_module("ortools.sat.python.cp_model")``."""
    return LazyModule(name)


class _NoLinalg:
    """Import hook refusing ``scipy.linalg`` and its submodules to one thread
    (used only while :func:`numba_without_blas_probe` imports one numba
    module in that thread; another thread's imports go through)."""

    def __init__(self):
        self.thread = threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if (name == "scipy.linalg" or name.startswith("scipy.linalg.")) and threading.get_ident() == self.thread:
            raise ImportError(f"{name}: not imported for numba's start-up BLAS probe")
        return None


def numba_without_blas_probe() -> None:
    """Import numba's ``numba.np.arraymath`` without its BLAS probe.

    On import, that module sets ``_HAVE_BLAS`` by importing
    ``scipy.linalg.cython_blas``, which runs all of ``scipy.linalg``'s
    ``__init__`` (0.12 s of the 0.5 s a ``simulate`` command now takes).
    The flag only picks how compiled ``np.correlate`` and ``np.convolve``
    form inner products (a plain loop without BLAS); ``np.dot`` and
    ``np.linalg`` in compiled code import ``scipy.linalg`` themselves when
    they are compiled (numba's ``ensure_blas``), so they keep working.
    No effect once ``numba.np.arraymath`` is imported.  Called by
    :func:`load_kernels`, so every process that compiles epochbench's
    kernels skips the probe (none of them uses ``np.correlate`` or
    ``np.convolve``; a user's own compiled ``np.correlate`` in the same
    process then takes numba's plain loop).
    """
    import sys
    if "numba.np.arraymath" in sys.modules:
        return
    hook = _NoLinalg()
    sys.meta_path.insert(0, hook)
    try:
        importlib.import_module("numba.np.arraymath")
    finally:
        sys.meta_path.remove(hook)


# ---- compiled kernels on first call ------------------------------------------------------
_KERNELS: list["LazyKernel"] = []
_INTRINSICS: list["LazyIntrinsic"] = []
_NUMBA = None                                 # the numba module once the kernels are compiled
_LOCK = threading.RLock()


class LazyKernel:
    """A function to be compiled by ``numba.njit(**options)``, not yet.

    Importing numba and building its typing context cost about 0.35 s,
    more than a whole short simulation (issue 18), so a module's kernels are
    defined with :func:`njit` below and numba is imported the first time
    any kernel is called from Python (or its dispatcher is asked for):
    :func:`load_kernels` then makes every kernel defined so far a numba
    dispatcher and puts it in place of this object in every module's
    namespace, so that compiled callers see dispatchers and later Python
    calls go straight to them.  ``py_func`` is the plain function, as on a
    numba dispatcher.
    """

    def __init__(self, func, options: dict):
        self.py_func = func
        self.options = options
        self.dispatcher = None
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        return self.compiled()(*args, **kwargs)

    def compiled(self):
        """The numba dispatcher (numba imported now if it was not yet)."""
        if self.dispatcher is None:
            load_kernels()
        return self.dispatcher

    @property
    def _numba_type_(self):                   # passed as an argument to a compiled function
        return self.compiled()._numba_type_

    def __getattr__(self, name: str):         # signatures, overloads, ... of the dispatcher
        if name in ("dispatcher", "py_func", "options") or name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __get__(self, obj, objtype=None):     # a method when it is a class attribute, like a function
        return self if obj is None else types.MethodType(self, obj)

    def __reduce__(self):                     # by reference, as a function or a dispatcher pickles
        return _kernel_named, (self.py_func.__module__, self.py_func.__qualname__)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _kernel_named(module: str, qualname: str):
    """The kernel ``module.qualname`` (a :class:`LazyKernel` or, once loaded,
    its dispatcher): how a pickled kernel is found again."""
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def njit(**options):
    """``numba.njit(**options)``, compiled on first call: a decorator giving a
    :class:`LazyKernel` while numba is not loaded, the numba dispatcher itself
    once it is.  The kernel's file is noted as this process imported it
    (:func:`_note_source`)."""
    def deco(func):
        _note_source(func)
        with _LOCK:
            if _NUMBA is not None:
                return _dispatcher(_NUMBA, LazyKernel(func, options))
            kernel = LazyKernel(func, options)
            _KERNELS.append(kernel)
            return kernel
    return deco


class LazyIntrinsic:
    """A numba ``@intrinsic`` (a typing function emitting LLVM IR) made when
    numba is loaded, like :class:`LazyKernel`: :func:`load_kernels` puts
    ``numba.extending.intrinsic(func)`` in its place in every module's
    namespace, before any kernel calling it is compiled."""

    def __init__(self, func):
        self.py_func = func
        self.dispatcher = None
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__name__} is an intrinsic: it is called from compiled kernels only")

    def __reduce__(self):
        return _kernel_named, (self.py_func.__module__, self.py_func.__qualname__)


def intrinsic(func):
    """``numba.extending.intrinsic(func)``, made when numba is loaded
    (:class:`LazyIntrinsic`)."""
    _note_source(func)
    with _LOCK:
        if _NUMBA is not None:
            from numba.extending import intrinsic as make
            return make(func)
        lazy = LazyIntrinsic(func)
        _INTRINSICS.append(lazy)
        return lazy


def readonly(a):
    """A read-only view of the numpy array ``a`` (O(1)), to pass to a
    compiled kernel that does not write it: numba compiles one version of a
    kernel, and of every kernel it calls, per read-only flag (and layout) of
    each argument; a kernel given its arrays read-only whatever the caller's
    are is compiled once (the event loop took about 40 s a version with a
    cold cache, and a fresh-clone CI compiled three)."""
    view = a.view()
    view.flags.writeable = False
    return view


def kernels_loaded() -> bool:
    """Whether numba is imported and the kernels are numba dispatchers: after
    that, running a compiled kernel costs no start-up any more (the
    pure-Python twins of a few kernels are used only before it)."""
    return _NUMBA is not None


def load_kernels() -> None:
    """Import numba (without its BLAS probe, :func:`numba_without_blas_probe`),
    make every :class:`LazyKernel` a dispatcher and replace it by that in the
    namespace of every loaded module (the :class:`LazyIntrinsic` ones too).
    Idempotent; thread-safe."""
    global _NUMBA
    import sys
    with _LOCK:
        if _NUMBA is not None:
            return
        numba_without_blas_probe()
        import numba
        from numba.extending import intrinsic as make_intrinsic
        for lazy in _INTRINSICS:
            lazy.dispatcher = make_intrinsic(lazy.py_func)
        for kernel in _KERNELS:
            kernel.dispatcher = _dispatcher(numba, kernel)
        for module in list(sys.modules.values()):
            try:                              # the raw namespace: a lazily loaded module stays unloaded
                names = object.__getattribute__(module, "__dict__")
            except Exception:                 # not a module: nothing to replace
                continue
            if isinstance(names, dict):
                for key, value in list(names.items()):
                    if type(value) is LazyKernel or type(value) is LazyIntrinsic:
                        names[key] = value.dispatcher
        _NUMBA = numba


def _dispatcher(numba, kernel: LazyKernel):
    """``numba.njit(**options)`` of ``kernel``, its cache (``cache=True``)
    one that several processes can fill at once
    (:class:`~epochbench.instances.kernel_cache.CheckedFunctionCache`, given
    in place of numba's, which ``cache=True`` would make first); where no
    folder can hold it (the package's ``__pycache__`` and the user's cache
    both read-only: numba's RuntimeError, no locator available), the kernel
    is compiled without a cache, and a warning on stderr says so once.  A
    cache folder is checked against the kernels' sources first
    (:func:`_fresh_cache`)."""
    dispatcher = numba.njit(**{**kernel.options, "cache": False})(kernel.py_func)
    if not kernel.options.get("cache"):
        return dispatcher
    from .kernel_cache import CheckedFunctionCache
    try:
        dispatcher._cache = CheckedFunctionCache(kernel.py_func)      # what numba's enable_caching does
    except RuntimeError as exc:
        if "cannot cache" not in str(exc):
            raise
        _warn_no_cache()
        return dispatcher
    _fresh_cache(dispatcher)
    return dispatcher


def _warn_no_cache() -> None:
    """Say once on stderr that the kernels are compiled without a cache."""
    global _CACHE_WARNED
    if not _CACHE_WARNED:
        _CACHE_WARNED = True
        import sys
        print("epochbench: warning: numba finds no writable folder for its cache (the package's __pycache__ "
              "nor the user cache); compiled kernels compile again in every process (set NUMBA_CACHE_DIR to a "
              "writable folder)", file=sys.stderr, flush=True)


_CACHE_WARNED = False

#: the subpackages whose modules define compiled kernels
KERNEL_PACKAGES = ("epochbench.instances", "epochbench.heuristics", "epochbench.exact", "epochbench.sim")
_IMPORTED: dict = {}                          # kernel file -> (mtime_ns, size) as this process imported it


def _note_source(func) -> None:
    """Note the file of kernel ``func`` as it is now, when its module is
    imported (one ``stat`` a file): the digest stands for the code this
    process runs, not for a file changed on disk since (a process that had
    imported the old code stamped the new text's digest, and its kernels,
    compiled from the old code, were kept as the new one's)."""
    path = getattr(getattr(func, "__code__", None), "co_filename", None)
    if path and os.path.realpath(path) not in _IMPORTED:
        try:
            st = os.stat(path)
            _IMPORTED[os.path.realpath(path)] = (st.st_mtime_ns, st.st_size)
        except OSError:
            pass
#: the file in a numba cache folder that names the kernels' sources its files were compiled from
STAMP = "epochbench-kernels.stamp"
_CHECKED: set = set()                         # cache folders checked in this process
_DIGEST: list = []                            # the sources' digest, once computed


def kernel_sources_digest() -> str:
    """CRC-32 of the modification time and size of every module of
    :data:`KERNEL_PACKAGES` that defines a compiled kernel (about 16 of 80
    files read to find them; 3-5 ms, zlib: hashlib's import alone took
    5 ms), imported or not: as this process imported it
    (:func:`_note_source`), else as it is on disk."""
    if not _DIGEST:
        import zlib
        from pathlib import Path
        crc = 0
        for name in KERNEL_PACKAGES:
            spec = importlib.util.find_spec(name)
            for folder in (spec.submodule_search_locations or []) if spec else []:
                for f in sorted(Path(folder).glob("*.py")):
                    text = f.read_bytes()
                    if b"njit(" in text or b"intrinsic" in text:
                        st = f.stat()
                        seen = _IMPORTED.get(os.path.realpath(f), (st.st_mtime_ns, st.st_size))
                        crc = zlib.crc32(f"{name}.{f.stem} {seen[0]} {seen[1]}\n".encode(), crc)
        _DIGEST.append(f"{crc:08x}")
    return _DIGEST[0]


def _fresh_cache(dispatcher) -> None:
    """Empty the numba cache folder of ``dispatcher`` of compiled kernels
    when they were compiled from other kernel sources than this package's
    (:func:`kernel_sources_digest`, kept in the folder's :data:`STAMP`).
    numba's cache checks a kernel against its own file only: a kernel that
    calls one of another file (the event loop of ``sim/policies.py`` calls
    ``sim/los_fast.py``'s LOS step) kept running the old compiled code after
    that file changed, so a change to it passed every test.  Once per folder
    and process; a folder that cannot be written is left as it is."""
    cache = getattr(dispatcher, "_cache", None)
    folder = getattr(cache, "cache_path", None)
    if folder is None or folder in _CHECKED:
        return
    _CHECKED.add(folder)
    from pathlib import Path
    stamp, digest = Path(folder) / STAMP, kernel_sources_digest()
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass                                  # no stamp: a new folder, or one of before stamps
    from .kernel_cache import folder_lock
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        with folder_lock(folder):             # not while another process saves a kernel there
            if stamp.exists() and stamp.read_text() == digest:
                return                        # another process emptied it just now (and may have saved since)
            for f in Path(folder).iterdir():
                if f.suffix in (".nbi", ".nbc"):
                    f.unlink(missing_ok=True)
            stamp.write_text(digest)
    except OSError:
        pass                                  # read-only: numba's own checks are all there is


def _after_fork() -> None:
    """A child forked while another thread held the lock gets a free one."""
    global _LOCK
    _LOCK = threading.RLock()


os.register_at_fork(after_in_child=_after_fork)
