"""Load every registered method: built-in modules and third-party plug-ins.

Third-party packages register heuristics through the entry-point group
``epochbench.heuristics``.  An entry point named ``NAME`` or ``FAMILY:NAME``
points at a function ``f(instance)``; it is registered as heuristic ``NAME``
of ``FAMILY`` (default ``packing``).  If loading the object already
registered it (it used the decorator), nothing more happens.  A plug-in
that fails to import, or whose name is already taken (a built-in or an
earlier plug-in), is skipped with one warning on stderr naming its entry
point; every other method stays usable.
"""
from __future__ import annotations

import importlib
import sys
from importlib.metadata import entry_points

from epochbench.instances import registry

BUILTIN_PACKAGES = ("epochbench.heuristics", "epochbench.exact")
ENTRY_POINT_GROUP = "epochbench.heuristics"
_loaded = False


def builtin_modules() -> list[str]:
    """Every public module of :data:`BUILTIN_PACKAGES` (one per family):
    adding a family's heuristics is adding a module, nothing to list."""
    import pkgutil
    out = []
    for pkg in BUILTIN_PACKAGES:
        path = importlib.import_module(pkg).__path__
        out += [f"{pkg}.{m.name}" for m in pkgutil.iter_modules(path) if not m.name.startswith("_")]
    return sorted(out)


def load_all() -> None:
    """Import the built-in method modules and the entry-point plug-ins (once)."""
    global _loaded
    if _loaded:
        return
    for mod in builtin_modules():
        importlib.import_module(mod)
    _loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            _load_plugin(ep)
        except Exception as exc:  # a plug-in's own import may raise anything
            reason = f"{type(exc).__name__}: {exc}" if not isinstance(exc, PluginError) else str(exc)
            print(f"epochbench: warning: plug-in entry point '{ep.name} = {ep.value}' "
                  f"({ENTRY_POINT_GROUP}): {reason.splitlines()[0] if reason else type(exc).__name__}; "
                  "skipped", file=sys.stderr)


class PluginError(ValueError):
    """A plug-in entry point that cannot be registered."""


def _load_plugin(ep) -> None:
    """Import entry point ``ep`` and register it (unless loading it already
    did); a name taken by another method, built-in or plug-in, is refused."""
    family, _, name = ep.name.rpartition(":")
    family = family or "packing"
    if not name:
        raise PluginError("empty method name")
    func = ep.load()
    if not callable(func):
        raise PluginError(f"{ep.value} is a {type(func).__name__}, not a function")
    mine = [m for m in registry.methods(family) if m.func is func]
    if mine:
        return                                          # registered itself (decorator) on import
    taken = [m for m in registry.methods(family) if m.name == name]
    if taken:
        raise PluginError(f"{family} method {name!r} already exists ({taken[0].origin}); "
                          "a plug-in cannot replace it")
    registry.register(family, name, origin=f"entry point {ep.value}")(func)


def import_function(spec: str):
    """``"package.module:function"`` -> the function (clear error otherwise)."""
    mod_name, sep, func_name = spec.partition(":")
    if not sep or not mod_name or not func_name:
        raise ValueError(f"expected MODULE:FUNCTION, got {spec!r}")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {mod_name!r}: {exc}") from None
    try:
        return getattr(mod, func_name)
    except AttributeError:
        raise ValueError(f"module {mod_name!r} has no attribute {func_name!r}") from None
