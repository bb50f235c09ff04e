"""One registry mechanism for everything found by name: methods, generators,
experiments, policies.

A :class:`Catalog` maps keys to entries.  Entries are added by a decorator
when the module that defines them is imported; a catalog *completes itself*:
a lookup that misses imports the next of its *sources* (built-in modules,
then plug-in entry points, cheapest first) until the key is found or every
source has been tried, so no caller ever loads anything by hand and nothing
heavy is imported before it is needed.
"""
from __future__ import annotations

import functools
import importlib
import os
import sys
import threading
from typing import Any, Callable, Generic, Hashable, Iterable, Iterator, TypeVar

T = TypeVar("T")

#: a source of entries: a callable that imports (and so registers) something
Source = Callable[[], None]


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line: what
    a listing or a command's help shows of an entry.  A period after an
    abbreviation ("e.g.", "sec.") or inside brackets or a quotation ends no
    sentence."""
    para = " ".join((doc or "").strip().split("\n\n")[0].split())
    depth, quoted = 0, False
    for i, ch in enumerate(para):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
        elif ch == '"':
            quoted = not quoted
        elif (ch == "." and para[i + 1:i + 2] == " " and not depth and not quoted
              and para[:i + 1].rsplit(None, 1)[-1].lstrip("([\"'").lower() not in _ABBREVIATIONS):
            return para[:i + 1]
    return para


#: words whose period ends no sentence (the whole word, in any case)
_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "cf.", "al.", "sec.", "fig.", "eq.", "vs."})


class PluginError(ValueError):
    """A plug-in entry point that cannot be registered."""


def modules_of(package: str, *, private: bool = False) -> Source:
    """A source importing every module of ``package`` (those starting with
    ``_`` only with ``private=True``), in name order."""
    def load() -> None:
        import pkgutil
        pkg = importlib.import_module(package)
        for m in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            if private or not m.name.startswith("_"):
                importlib.import_module(f"{package}.{m.name}")
    load.__qualname__ = f"modules_of({package!r})"
    return load


def module(name: str) -> Source:
    """A source importing module ``name``."""
    def load() -> None:
        importlib.import_module(name)
    load.__qualname__ = f"module({name!r})"
    return load


def entry_points(*, group: str):
    """``importlib.metadata.entry_points(group=group)``, without importing
    ``importlib.metadata`` (20 ms, a tenth of a short ``simulate``) when no
    distribution on ``sys.path`` can declare an entry point of ``group``
    (:func:`_may_declare`)."""
    if not _may_declare(group):
        return ()
    from importlib.metadata import entry_points as found
    return found(group=group)


def _may_declare(group: str) -> bool:
    """False only when no distribution importlib.metadata would find can
    declare an entry point of ``group``: every finder that lists
    distributions is the standard path finder, and no ``entry_points.txt``
    of a ``*.dist-info`` or ``*.egg-info`` folder in a folder of ``sys.path``
    names ``group``.  True on anything else (a zip or an egg on the path,
    another finder, a file that cannot be read)."""
    from importlib.machinery import PathFinder
    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return True
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except NotADirectoryError:
            return True                                    # a zip file: importlib.metadata reads it
        except OSError:
            continue                                       # absent: nothing there
        for name in names:
            low = name.lower()
            if low.endswith(".egg"):
                return True
            if low.endswith((".dist-info", ".egg-info")):
                path = os.path.join(folder, name, "entry_points.txt")
                try:
                    with open(path, "rb") as fh:
                        if group.encode() in fh.read():
                            return True
                except (FileNotFoundError, NotADirectoryError):
                    continue
                except OSError:
                    return True
    return False


def in_package(frame) -> bool:
    """Whether ``frame`` runs the module-level or function code of one of
    epochbench's own modules (its globals are that module's namespace):
    what registers a built-in.  Not a function's ``__module__``, which
    ``functools.wraps`` copies from the function it wraps (a user's wrapper
    of ``ff`` read as built-in, was handed the caller's instance uncopied,
    and became one of ``validate``'s yardsticks), nor its file (a ``.pyc``
    without its ``.py`` names the source its code came from).  O(1)."""
    name = str(frame.f_globals.get("__name__") or "")
    if name != "epochbench" and not name.startswith("epochbench."):
        return False
    module = sys.modules.get(name)
    return module is not None and vars(module) is frame.f_globals


def origin_of(func, frame) -> str:
    """What registered ``func`` from ``frame`` (the caller of a register
    function): ``builtin`` for epochbench's own modules (:func:`in_package`),
    else ``module NAME``, the function's module, or the registering one for
    a wrapper of one of epochbench's functions."""
    if in_package(frame):
        return "builtin"
    module = str(getattr(func, "__module__", None) or "?")
    if module == "epochbench" or module.startswith("epochbench."):
        module = str(frame.f_globals.get("__name__") or "?")
    return f"module {module}"


#: the plug-in warnings this process has given; a local Dask worker is handed
#: its client's (:func:`epochbench.sweep`), so that a sweep on two workers gives
#: each once, not three times
WARNED: set[str] = set()


def plugins(group: str, register: Callable[[Any], None]) -> Source:
    """A source loading every entry point of ``group`` with ``register(ep)``;
    one that fails (its import raises or calls ``sys.exit``, its name is
    taken) is skipped with one warning on stderr naming it (unless this
    process gave it already, :data:`WARNED`), and every other entry stays
    usable."""
    def load() -> None:
        for ep in entry_points(group=group):
            try:
                register(ep)
            except (Exception, SystemExit) as exc:  # a plug-in's own import may raise anything, exit too
                reason = str(exc) if isinstance(exc, PluginError) else (
                    f"SystemExit({exc.code!r}) on import" if isinstance(exc, SystemExit)    # it ended every command
                    else f"{type(exc).__name__}: {exc}")
                first = reason.splitlines()[0] if reason else type(exc).__name__
                line = f"epochbench: warning: plug-in entry point '{ep.name} = {ep.value}' ({group}): {first}; skipped"
                if line not in WARNED:
                    WARNED.add(line)
                    print(line, file=sys.stderr)
    load.__qualname__ = f"plugins({group!r})"
    return load


def plugin_call(label: str, origin: str, call: Callable[[], Any], *, doing: str = "it",
                ok: Callable[[Any], bool] | None = None, wanted: str = "", keywords: bool = False) -> Any:
    """``call()``, code of a plug-in's when ``origin`` is not ``"builtin"``:
    what it does wrong is one line naming it (``label``, such as
    ``"policy 'mine'"``, and ``origin``), not a traceback from inside it.

    Parameters
    ----------
    label, origin : str
        What is called, and whose it is (:meth:`Catalog.origin`).
    call : callable
        Takes no argument.
    doing : str
        Says what was called in the message (``"its factory"``).
    ok : callable, optional
        ``ok(result)``: whether the result is what the caller needs
        (``wanted`` says what that is).
    keywords : bool
        Whether a ``TypeError`` for an unexpected keyword is the caller's (an
        option the plug-in does not take).

    Returns
    -------
    object
        What ``call()`` returned.

    Raises
    ------
    ValueError
        A value refused (the caller's to mend), named; a ``TypeError`` for
        an unexpected keyword with ``keywords``, the same way.
    MethodFailed
        Anything else it raised (``SystemExit`` too), or a result that ``ok``
        refuses (a factory returning 42 ended in an AttributeError deep in
        the run).

    Notes
    -----
    A built-in's call is made as it is, at no cost.  The three places that
    run plug-in code (the policy factories, the generators, the
    experiments' hooks) share this one wording.
    """
    if origin == "builtin":
        return call()
    from .checks import short
    from .core import MethodFailed
    name = f"{label} ({origin})"
    try:
        out = call()
    except ValueError as exc:
        raise ValueError(f"{name}: {_one_line(exc)}") from exc
    except (Exception, SystemExit) as exc:   # sys.exit in a plug-in: its failure (it ended the command, silently)
        if keywords and isinstance(exc, TypeError) and "unexpected keyword argument" in str(exc):
            raise TypeError(f"{name}: {_one_line(exc)}") from exc
        raise MethodFailed(f"{name}: {doing} raised {type(exc).__name__}: {_one_line(exc)}") from exc
    if ok is not None and not ok(out):
        raise MethodFailed(f"{name}: {doing} returned {short(out, 40)} ({type(out).__name__}), not {wanted}")
    return out


def _one_line(exc: BaseException) -> str:
    """``str(exc)`` with its runs of white space (line ends too) as one space."""
    return " ".join(str(exc).split())


def guarded(obj: Any, label: str, origin: str) -> Any:
    """``obj`` as epochbench calls it, when a plug-in made it (``origin``
    not ``"builtin"``; a built-in's is returned as it is): each of its
    methods that raises is one line naming it (:class:`PluginObject`).

    Parameters
    ----------
    obj : object
        What a plug-in's factory returned (a simulator's policy).
    label, origin : str
        As :func:`plugin_call` takes them.

    Returns
    -------
    object
        ``obj`` itself, or a :class:`PluginObject` around it.
    """
    return obj if origin == "builtin" else PluginObject(obj, f"{label} ({origin})")


class PluginObject:
    """A plug-in's object as a simulator's loop calls it: a method of it that
    raises (or calls ``sys.exit``) raises
    :class:`~epochbench.instances.core.MethodFailed`, one line naming the
    plug-in and the method (a pool policy whose ``schedule`` divided by zero
    ended the command in a traceback), with the cause chained.  What
    epochbench itself refused inside such a call (a
    :class:`~epochbench.instances.core.RunStopped`: a start the machine
    checked, a selector's failure) passes as it is, already one line, and so
    does a ``KeyboardInterrupt``.

    Attributes are read from the object and written to it (a farm run sets
    a policy's ``untimed``); ``len()`` is the object's, guarded too.  Other
    protocols (copying, pickling, ``repr``) see the wrapper.

    Notes
    -----
    Cost: one ``functools.partial`` a method read, and a ``try`` a call.
    """

    __slots__ = ("_plugin_obj", "_plugin_name")

    def __init__(self, obj: Any, name: str) -> None:
        object.__setattr__(self, "_plugin_obj", obj)
        object.__setattr__(self, "_plugin_name", name)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        obj = object.__getattribute__(self, "_plugin_obj")      # AttributeError, not a loop, before __init__
        value = getattr(obj, attr)
        if not callable(value) or isinstance(value, type):
            return value
        return functools.partial(_guarded_call, self._plugin_name, attr, value)

    def __setattr__(self, attr: str, value: Any) -> None:
        if attr in PluginObject.__slots__:      # copying sets them
            object.__setattr__(self, attr, value)
        else:
            setattr(self._plugin_obj, attr, value)

    def __len__(self) -> int:
        return _guarded_call(self._plugin_name, "__len__", len, self._plugin_obj)

    def __repr__(self) -> str:
        return f"<{self._plugin_name}: {type(self._plugin_obj).__name__}>"


def _guarded_call(name: str, attr: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)``, a method ``attr`` of plug-in ``name``
    (:class:`PluginObject`).  A ``ValueError`` from ``reset`` stays one,
    named (as a factory's, :func:`plugin_call`): that is where a policy
    checks its options against the stream (multi-queue's partitions), the
    caller's input to mend."""
    from .core import MethodFailed, RunStopped
    try:
        return call(*args, **kwargs)
    except RunStopped:
        raise
    except ValueError as exc:
        if attr == "reset":
            raise ValueError(f"{name}: {_one_line(exc)}") from exc
        raise MethodFailed(f"{name}: its {attr} raised {type(exc).__name__}: {_one_line(exc)}") from exc
    except (Exception, SystemExit) as exc:
        raise MethodFailed(f"{name}: its {attr} raised {type(exc).__name__}: {_one_line(exc)}") from exc


def plugin_label(obj: Any) -> str | None:
    """How a message names ``obj`` when a plug-in made it (a
    :class:`PluginObject`: ``policy 'mine' (entry point lab:mine)``), else
    None: a caller's own check of what it did names the plug-in, not the
    object's ``name`` (a plug-in returning a built-in EASY read ``policy
    'easy'``)."""
    return obj._plugin_name if isinstance(obj, PluginObject) else None


class Catalog(Generic[T]):
    """Entries of one kind, by key, completed lazily from ordered sources.

    Parameters
    ----------
    what : str
        What an entry is, for messages ("method", "generator", "policy").
    sources : iterable of callables
        Tried in order, each at most once, when a lookup misses or when the
        whole catalog is listed.  A source that raises is retried at the next
        miss (the error propagates to the caller that triggered it).
    describe_key : callable, optional
        ``key -> str`` for error messages.
    builtin : int, optional
        How many of the first ``sources`` register epochbench's own entries
        (:meth:`load_builtins`); the rest are plug-ins.
    """

    def __init__(self, what: str, sources: Iterable[Source] = (), *,
                 describe_key: Callable[[Hashable], str] = repr, builtin: int = 0) -> None:
        self.what = what
        self._items: dict[Hashable, T] = {}
        self._origins: dict[Hashable, str] = {}
        self._sources: list[Source] = list(sources)
        self._builtin = builtin
        self._done = 0                       # sources[:_done] have been loaded
        self._describe = describe_key
        self._lock = threading.Lock()        # guards _done (not held while a source imports)
        self._running = threading.local()    # .sources: the sources this thread is inside (_load_next)

    # -- registering -------------------------------------------------------
    def add(self, key: Hashable, entry: T, *, origin: str = "builtin", same=None) -> T:
        """Register ``entry`` under ``key``; a *different* entry already there
        raises ``ValueError`` (``same(old, new)`` decides what counts as the
        same; default identity)."""
        old = self._items.get(key)
        if old is not None and not (same(old, entry) if same else old is entry):
            raise ValueError(f"{self.what} {self._describe(key)} already registered by "
                             f"{self._origins.get(key, 'builtin')}")
        self._items[key] = entry
        self._origins[key] = origin
        return entry

    def add_source(self, source: Source) -> None:
        """Append a source (tried after the existing ones)."""
        self._sources.append(source)

    # -- finding -----------------------------------------------------------
    def _load_next(self) -> bool:
        """Load the next source; False when all are loaded.  Thread-safe: two
        threads that miss at once may both run the same source (an import is
        done once whatever calls it; a plug-in registers the same entry
        again), and the count of loaded sources only moves past the one
        each ran, so no source is skipped (``_done += 1`` from both skipped
        the next one: a Dask worker's two threads lost knapsack's ``cpsat``).
        No lock is held while a source runs, so that an import that looks
        something up cannot wait on another thread's.  A lookup or listing
        from inside the source that this thread is loading (a plug-in that
        lists the catalog while it imports) sees what is registered so far:
        the source was run again from inside itself, and warned that the
        plug-in was skipped while its outer run registered it."""
        with self._lock:
            i = self._done
        inside = self._running.__dict__.setdefault("sources", set())
        if i >= len(self._sources) or i in inside:
            return False
        inside.add(i)
        try:
            self._sources[i]()               # raises: not counted, retried next time
        finally:
            inside.discard(i)
        with self._lock:
            self._done = max(self._done, i + 1)
        return True

    def complete(self) -> "Catalog[T]":
        """Load every source (listing needs all of them)."""
        while self._load_next():
            pass
        return self

    def load_builtins(self) -> None:
        """Load the sources of epochbench's own entries (the first
        ``builtin``): what a registration from outside epochbench does
        first, so that a built-in's name is refused at once (taken before
        them, it made the built-in's module fail to load at the first
        lookup).  A source that is loading goes on with what it has."""
        if self._builtin:
            self.load_through(self._sources[self._builtin - 1])

    def load_through(self, source: Source) -> None:
        """Load the sources up to and including ``source``."""
        while not self.has_loaded(source) and self._load_next():
            pass

    def find(self, key: Hashable) -> T | None:
        """The entry of ``key``, loading sources until it appears; ``None``
        if no source has it."""
        while key not in self._items:
            if not self._load_next():
                return None
        return self._items[key]

    def get(self, key: Hashable) -> T:
        """The entry of ``key``; ``KeyError`` naming the known keys otherwise."""
        entry = self.find(key)
        if entry is None:
            known = ", ".join(sorted(map(str, self.complete()._items))) or "none"
            raise KeyError(f"no {self.what} {self._describe(key)}; known: {known}")
        return entry

    def origin(self, key: Hashable) -> str:
        return self._origins.get(key, "builtin")

    def __contains__(self, key: Hashable) -> bool:
        return self.find(key) is not None

    def items(self) -> list[tuple[Hashable, T]]:
        return list(self.complete()._items.items())

    def keys(self) -> list[Hashable]:
        return list(self.complete()._items)

    def values(self) -> list[T]:
        return list(self.complete()._items.values())

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.complete()._items)

    # -- for tests: undo registrations ------------------------------------
    def snapshot(self) -> tuple:
        """The catalog's state, complete (an entry registered by a module
        import cannot be registered again), for :meth:`restore`."""
        self.complete()
        return dict(self._items), dict(self._origins), self._done

    def restore(self, state: tuple) -> None:
        """Back to a :meth:`snapshot` (the dicts are updated in place)."""
        items, origins, done = state
        self._items.clear()
        self._items.update(items)
        self._origins.clear()
        self._origins.update(origins)
        self._done = done

    def rewind(self, source: Source) -> None:
        """Load ``source`` (and every later one) again at the next miss or
        listing; re-importing an imported module is a no-op."""
        self._done = min(self._done, self._sources.index(source))

    def has_loaded(self, source: Source) -> bool:
        """Whether ``source`` has been loaded (a registration after it is not
        seen by it)."""
        return source in self._sources[:self._done]

    def loaded(self) -> dict[Hashable, T]:
        """The entries registered so far, without loading any source."""
        return dict(self._items)
