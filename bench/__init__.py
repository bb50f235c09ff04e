"""epochbench: parallel-job-scheduling heuristics measured against exact
solvers, decision by decision and over whole job streams.

The public face (``import epochbench as eb``): :func:`register`,
:func:`solve`, :func:`score`, :func:`validate`, :func:`generate`,
:func:`load`, :func:`save`, :func:`simulate`, :class:`Result`,
:class:`SimResult`, ``__version__``.  Importing the package is light: the
face is resolved on first use, and no solver (OR-Tools, PuLP) is imported
before an exact method is asked for (SciPy comes with the first compiled
heuristic: numba loads it).
"""
_FACE = ("register", "solve", "score", "validate", "generate", "load", "save", "simulate", "Result", "SimResult")
__all__ = [*_FACE, "__version__"]


def _version() -> str:
    from importlib import metadata
    try:
        return metadata.version("epochbench")
    except metadata.PackageNotFoundError:        # a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        globals()["__version__"] = version = _version()
        return version
    if name in _FACE:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'epochbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({n for n in globals() if not n.startswith("_") or n.startswith("__")} | set(_FACE)
                  | {"__version__"})
