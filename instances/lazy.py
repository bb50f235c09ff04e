"""Modules imported on first use: :func:`lazy_module`.

The solver back-ends (OR-Tools, HiGHS, PuLP, SciPy) take most of a second
to import.  A module that registers exact methods names them through
:func:`lazy_module`, so that listing or registering methods, or running a
simulation that never solves exactly, does not import them.
"""
from __future__ import annotations

import importlib
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
            module = importlib.import_module(object.__getattribute__(self, "_name"))
            object.__setattr__(self, "_module", module)
        return module

    def __getattr__(self, attr: str):
        return getattr(self.load(), attr)

    def __repr__(self) -> str:
        state = "loaded" if object.__getattribute__(self, "_module") is not None else "not loaded"
        return f"<lazy module {object.__getattribute__(self, '_name')!r} ({state})>"


def lazy_module(name: str) -> LazyModule:
    """A :class:`LazyModule` for ``name``: ``cp_model = lazy_module("ortools.sat.python.cp_model")``."""
    return LazyModule(name)


class _NoLinalg:
    """Import hook refusing ``scipy.linalg`` and its submodules (used only
    while :func:`numba_without_blas_probe` imports one numba module)."""

    def find_spec(self, name, path=None, target=None):
        if name == "scipy.linalg" or name.startswith("scipy.linalg."):
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
    No effect once ``numba.np.arraymath`` is imported.  Used by commands
    that run only cached kernels without linear algebra (``simulate``).
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
