"""epochbench: parallel-job-scheduling heuristics measured against exact
solvers, decision by decision and over whole job streams.

The public face (``import epochbench as eb``): :func:`register`,
:func:`solve`, :func:`score`, :func:`validate`, :func:`generate`,
:func:`load`, :func:`save`, :func:`simulate`, :class:`Result`,
:class:`SimResult`, ``__version__``.  Importing the package is light: the
face is resolved on first use, and no solver (OR-Tools, PuLP, SciPy) is
imported before an exact method is asked for.
"""
from __future__ import annotations

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("epochbench")
except _metadata.PackageNotFoundError:          # a source tree that was never installed
    __version__ = "0+unknown"

_FACE = ("register", "solve", "score", "validate", "generate", "load", "save", "simulate", "Result", "SimResult")
__all__ = [*_FACE, "__version__"]


def __getattr__(name: str):
    if name in _FACE:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'epochbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FACE))
