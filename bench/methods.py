"""Load every registered method: built-in modules and third-party plug-ins.

Third-party packages register heuristics through the entry-point group
``epochbench.heuristics``.  An entry point named ``NAME`` or ``FAMILY:NAME``
points at a function ``f(instance)``; it is registered as heuristic ``NAME``
of ``FAMILY`` (default ``packing``).  If loading the object already
registered it (it used the decorator), nothing more happens.
"""
from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from instances import registry

BUILTIN_PACKAGES = ("heuristics", "exact")
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
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        family, _, name = ep.name.rpartition(":")
        family = family or "packing"
        func = ep.load()
        if not any(m.func is func for m in registry.methods(family)):
            registry.register(family, name, origin=f"entry point {ep.value}")(func)
    _loaded = True


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
