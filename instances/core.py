"""Shared pieces of every problem family: errors, the result type, JSON helpers.

An instance is a frozen dataclass over numpy arrays plus a ``meta`` dict
(family, generator, parameters, seed, name).  A solver, heuristic or exact,
returns a :class:`Result`; the family decides what its ``decision`` holds
(``selected`` job indices for packing, ``bins`` for epochs).
"""
from __future__ import annotations

import copy
import json
import math
import numbers
import pickle
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np

STATUSES = ("optimal", "feasible", "infeasible", "timeout")

#: the most solver threads a call may ask for (CP-SAT refuses some 10,000 as
#: an invalid model; HiGHS with 12,000 ran far past its time limit)
MAX_THREADS = 1024


def check_threads(threads) -> int:
    """``threads`` as an ``int`` when it is an integer (not a bool) from 1
    to :data:`MAX_THREADS`; ValueError, one line, otherwise (0, -1 and 2.5
    reached the solvers, which took them for their defaults or rounded)."""
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"threads: must be an integer from 1 to {MAX_THREADS}, got {threads!r}")
    return int(threads)


class InstanceError(ValueError):
    """Malformed instance or instance file; the message names file and field."""


class InputNote(UserWarning):
    """A warning that the result leaves out or changes part of its input
    without refusing it (the jobs of a trace that a fit left out because
    its reader dropped them): the command line says it in one line."""


def note(message: str) -> None:
    """Warn :class:`InputNote` ``message``, attributed to the first caller
    outside epochbench (not to the line inside it that found it)."""
    import sys
    import warnings
    level, frame = 2, sys._getframe(1)       # stacklevel 2: note's caller
    while frame is not None and frame.f_globals.get("__name__", "").startswith("epochbench"):
        level, frame = level + 1, frame.f_back
    warnings.warn(InputNote(message), stacklevel=level)


def content(inst) -> bytes:
    """The pickle of an instance's fields (arrays, ``meta``...), without the
    caches an instance keeps beside them: equal before and after a call
    unless the call changed the instance (an instance that is not a
    dataclass: its whole pickle).  O(size of the instance)."""
    return pickle.dumps(tuple(getattr(inst, f.name) for f in fields(inst)) if is_dataclass(inst) else inst)


def digest(inst) -> str:
    """16 hex digits of SHA-1 over an instance's data (its fields but
    ``meta``: a name or a reference value does not make another instance),
    for telling two instances of one name apart (``score``'s
    ``instance_digest``, which ``compare`` checks).  Arrays count by their
    values (integers as int64, floats as float64, in C order), so an
    instance read back from its file has the digest it was written with.
    O(size of the instance)."""
    import hashlib
    h = hashlib.sha1()
    data = [getattr(inst, f.name) for f in fields(inst) if f.name != "meta"] if is_dataclass(inst) else [inst]
    _feed(h, data)
    return h.hexdigest()[:16]


def _feed(h, x) -> None:
    """Add ``x`` to hash ``h`` by value (:func:`digest`)."""
    if isinstance(x, np.ndarray):
        a = x.astype(np.int64) if x.dtype.kind in "iu" else x.astype(np.float64) if x.dtype.kind == "f" else x
        a = np.ascontiguousarray(a)
        h.update(f"a{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes() if a.dtype != object else repr(a.tolist()).encode())
    elif isinstance(x, (list, tuple)):
        h.update(f"l{len(x)}".encode())
        for y in x:
            _feed(h, y)
    elif isinstance(x, dict):
        h.update(f"d{len(x)}".encode())
        for k in sorted(x, key=str):
            _feed(h, k)
            _feed(h, x[k])
    else:
        h.update(f"{type(x).__name__}:{x!r}".encode())


def handed(inst) -> tuple:
    """A copy of ``inst`` to hand to code that is not epochbench's own (its
    read-only arrays read-only too, so a write fails where it is made), and
    its :func:`content`: compare after the call to tell whether the code
    changed it anyway (``meta``, or an array it made writable), and check
    its answer on ``inst``."""
    given = copy.deepcopy(inst)
    _read_only_like(inst, given)
    return given, content(given)


def _read_only_like(a, b) -> None:
    """The arrays of dataclass ``b`` (a deep copy of ``a``) read-only where
    ``a``'s are, in nested dataclasses too (a packing step's ``reservation``)."""
    if not is_dataclass(a) or isinstance(a, type):
        return
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and not x.flags.writeable:
            y.flags.writeable = False
        else:
            _read_only_like(x, y)


class InfeasibleSolution(AssertionError):
    """A solution that fails its family's independent feasibility check."""


class RunStopped(RuntimeError):
    """A run stopped for a reason that is not its input: a user's method
    failed in the middle of it, a service it used went away.  The message
    is one line (the command line prints it with exit status 1)."""


class MethodFailed(RunStopped):
    """A method called in the middle of a longer run (a simulator's selector)
    raised or gave a decision the checker refused; the message says where
    (the cause is chained)."""


class InstanceChanged(MethodFailed, ValueError):
    """A method changed the instance it was given (its answer would be
    checked against other data than it was asked about): the method's
    fault, a :class:`MethodFailed`, as ``epochbench.solve`` documents a
    method's errors; also the ``ValueError`` it was raised as before, so
    that code catching that still does."""


@dataclass(frozen=True)
class Result:
    """What a method decided on one instance.

    ``decision`` is the family's decision: packing and knapsack, a tuple of
    job (item) indices in pick order; epochs, a tuple of bins, each a tuple
    of job indices; assignment, the ``(job, machine)`` pairs; mapping, the
    machine of each task (``solve --json`` names it per family:
    :data:`DECISION_KEYS`).
    ``value`` is the objective of that decision, recomputed by the family,
    ``bound`` the best bound the method proved (``None`` when nothing was
    proved: heuristics, and exact methods that timed out without one; never
    0 or a guess), ``status`` one of :data:`STATUSES` (``optimal`` only when
    proved, then ``bound == value``), ``seconds`` the wall time.

    Checked when made (:func:`check_result`; one-line ``ValueError`` naming
    the field): ``family`` one of :data:`DECISION_KEYS`' families,
    ``method`` a non-empty string, ``value`` a
    number, NaN where there is no decision (never infinite or a string), or
    None (a method may leave it: :func:`~epochbench.instances.registry.solve`
    puts what the decision is worth in every result it returns), ``status``
    one of :data:`STATUSES`, ``seconds`` a finite number >= 0 (or None: ``solve``
    measures the time itself and replaces a method's own figure), ``bound``
    a number or None (one that is not finite proves nothing: ``solve``
    withdraws it), ``info`` a dict (None is taken as ``{}``).  Whether the
    fields agree is not checked here, but by ``solve`` on what a method
    returns (:func:`~epochbench.instances.registry.honest`): an ``optimal``
    without a bound gets ``bound = value``, one whose bound is not its value
    is withdrawn to ``feasible`` (``info["withdrawn"]``); scoring counts
    only an exact method's claims as proofs.  The decision is the family's
    checker's to judge; its lists and numpy arrays are made tuples, at
    every level.  A result is hashable (a set of results, a dict
    keyed by them): its hash leaves ``info`` out, which a dict cannot enter;
    equality compares every field.
    """

    family: str
    method: str
    decision: tuple
    value: float
    status: str
    seconds: float
    bound: float | None = None
    info: dict = field(default_factory=dict, hash=False)     # unhashable: every result was (TypeError)

    def __post_init__(self):
        if self.info is None:
            object.__setattr__(self, "info", {})     # frozen: what every reader of info expects
        object.__setattr__(self, "decision", _frozen(self.decision))   # frozen all the way down
        check_result(self)

    @property
    def proven(self) -> bool:
        return self.status == "optimal"

    def to_dict(self) -> dict:
        """The result as plain JSON values (``value`` / ``bound`` None where
        missing, as is a NaN or infinity in ``info``: a plug-in's may hold
        one, and ``json.dumps(..., allow_nan=False)`` holds); the decision
        under its family's key (:data:`DECISION_KEYS`)."""
        key = DECISION_KEYS.get(self.family, "decision")
        return {
            "family": self.family,
            "method": self.method,
            "status": self.status,
            "value": _num(self.value),
            "bound": _num(self.bound),
            "seconds": self.seconds,
            key: _plain(self.decision),
            **({"info": strict_plain(self.info)} if self.info else {}),
        }


def _number(x) -> bool:
    """``x`` is a real number (Python's or numpy's), not a bool."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _frozen(decision):
    """``decision`` with its lists, ranges and numpy arrays made tuples, at
    every level (an epochs decision's bins, an assignment's pairs): a
    :class:`Result` is frozen, and a list inside it could still be changed
    after it was checked (and compare unequal to the same decision as a
    tuple).  Anything else is left for the family's checker to judge.
    O(size of the decision)."""
    if isinstance(decision, np.ndarray):
        decision = decision.tolist()
    if not isinstance(decision, _NESTED):
        return decision
    if not any(issubclass(t, _NESTED) for t in set(map(type, decision))):   # flat: the types read in C
        return decision if type(decision) is tuple else tuple(decision)
    return tuple(_frozen(x) for x in decision)


_NESTED = (list, tuple, range, np.ndarray)


def _finite(x) -> bool:
    """``x`` (a number) is finite as a float (an int past a float's range is
    not: JSON could not hold it, and ``math.isfinite`` raises on it)."""
    return _fits_float(x) and math.isfinite(x)


def check_result(res: Result) -> None:
    """Refuse a :class:`Result` whose fields are not what its docstring
    allows: the names, ``value`` (a number; NaN: no decision), ``status``,
    ``seconds``, ``bound`` and ``info``.  O(1).

    Parameters
    ----------
    res : Result
        The result just made (its ``__post_init__``).

    Raises
    ------
    ValueError
        One line naming the first field that is wrong and the value given.
    """
    for name in ("family", "method"):
        given = getattr(res, name)
        if not isinstance(given, str) or not given:
            raise ValueError(f"{name} must be a non-empty string, got {given!r}")
    if res.family not in DECISION_KEYS:
        raise ValueError(f"family must be one of {tuple(DECISION_KEYS)}, got {res.family!r}")
    if res.value is not None and (not _number(res.value) or not (_finite(res.value) or res.value != res.value)):
        raise ValueError(f"value must be a number, finite or NaN (no decision), or None (solve computes it), "
                         f"got {res.value!r}")
    if res.status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {res.status!r}")
    if res.seconds is not None and not (_number(res.seconds) and _finite(res.seconds) and res.seconds >= 0):
        raise ValueError(f"seconds must be a finite number >= 0 (the wall time), got {res.seconds!r}")
    if res.bound is not None and not _number(res.bound):
        raise ValueError(f"bound must be a number or None, got {res.bound!r}")
    if not isinstance(res.info, dict):
        raise ValueError(f"info must be a dict, got {type(res.info).__name__}")


#: the JSON key of each family's decision (``solve --json``)
DECISION_KEYS = {"packing": "selected", "epochs": "bins", "knapsack": "selected",
                 "assignment": "pairs", "mapping": "assignment"}


def _num(x):
    """A number for JSON: an int where whole, None where missing or not
    finite (a timeout's NaN value), so that ``json.dumps`` of a
    :meth:`Result.to_dict` is strict JSON."""
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _plain(obj: Any):
    """numpy-free copy of ``obj`` fit for ``json.dumps``."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def strict_plain(obj: Any):
    """:func:`_plain` whose non-finite floats (NaN, inf) become None: what
    strict JSON can hold (``null``)."""
    obj = _plain(obj)
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict_plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [strict_plain(v) for v in obj]
    if isinstance(obj, (np.generic,)):
        return strict_plain(obj.item())
    return obj


def json_text(obj: Any, **kw) -> str:
    """Strict JSON of ``obj``: numpy values as plain numbers, NaN and
    infinities as ``null`` (``json.dumps(..., allow_nan=False)`` holds)."""
    import json
    return json.dumps(strict_plain(obj), allow_nan=False, **kw)


#: the largest machine size (nodes, or units of a resource) a workload may declare: the
#: whole numbers a float64 holds, what job files and the simulator's times carry exactly
MAX_NODES = 2**53
#: the int64 range every integer field must fit in (the checkers sum exactly: ``epochbench.instances.checks``)
INT64_MIN, INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def _at(arr: np.ndarray, flat: int) -> str:
    """`` at [i][j]``: where flat index ``flat`` of ``arr`` sits ("" for a scalar)."""
    return " at " + "".join(f"[{int(i)}]" for i in np.unravel_index(flat, arr.shape)) if arr.ndim else ""


def _numbers(value, name: str, source: str, ndim: int | None) -> np.ndarray:
    """``value`` as an array of numbers, every entry as it was written.

    Refuses ragged lists, a dimension other than ``ndim`` (an empty value
    may stand for an empty matrix), booleans (numpy reads ``true`` as 1,
    even in a list mixed with numbers), strings, ``None`` and other objects.
    A numpy numeric array, a single number, and a list of plain ints (or of
    plain floats) that numpy holds exactly come back as numpy made them;
    any other list comes back as an object array of its own ``int`` /
    ``float`` entries, so that no big integer is rounded through a float
    before the caller checks its range.  O(size): a list costs one scan of
    its entries' types on top of ``np.asarray`` (about 3x for 80,000).
    """
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):  # ragged lists
        raise InstanceError(f"{source}: field '{name}' is not a rectangular array "
                            "(rows of different lengths)") from None
    except OverflowError:
        raise InstanceError(f"{source}: field '{name}' has a number too large for a float") from None
    if ndim is not None and arr.ndim != ndim and not (arr.size == 0 and ndim == 2 and arr.ndim < 2):
        raise InstanceError(f"{source}: field '{name}' must have {ndim} dimension(s), got shape {arr.shape}")
    if arr.size == 0:
        return arr
    if arr.dtype.kind == "b":
        raise InstanceError(f"{source}: field '{name}' holds booleans; expected numbers")
    if arr.dtype.kind in "iuf" and (isinstance(value, (np.ndarray, np.integer, np.floating))
                                    or type(value) in (int, float)):
        return arr
    if arr.dtype.kind not in "iufO":
        raise InstanceError(f"{source}: field '{name}' must hold numbers, got dtype {arr.dtype}")
    obj = arr if arr.dtype == object else np.asarray(value, dtype=object)
    types = set(map(type, obj.flat))
    if (types == {int} and arr.dtype.kind in "iu") or (types == {float} and arr.dtype.kind == "f"):
        return arr  # plain ints numpy held exactly, or plain floats
    for flat, x in enumerate(obj.flat):
        if isinstance(x, (bool, np.bool_)):
            raise InstanceError(f"{source}: field '{name}' has a boolean ({x}){_at(obj, flat)}; expected a number")
        if not isinstance(x, (int, float, np.integer, np.floating)):
            raise InstanceError(f"{source}: field '{name}' has {type(x).__name__} {x!r:.40}{_at(obj, flat)}; "
                                "expected a number")
    return obj


def _integral(fl: np.ndarray, shaped: np.ndarray, pos: np.ndarray, name: str, source: str) -> None:
    """Refuse non-finite, fractional or beyond-int64 entries of the float array
    ``fl``; entry k sits at flat index ``pos[k]`` of ``shaped`` (for messages)."""
    fin = np.isfinite(fl)
    checks = ((~fin, "has a non-finite entry {v}{at}"),
              (fin & (fl != np.round(fl)), "must hold integers, got {v}{at}"),
              (fin & ((fl >= 2.0 ** 63) | (fl < -(2.0 ** 63))), "has {v}{at}, beyond the int64 range"))
    for bad, what in checks:
        if bad.any():
            k = int(np.argmax(bad))
            at = _at(shaped, int(pos[k]))
            raise InstanceError(f"{source}: field '{name}' " + what.format(v=float(fl[k]), at=at))


def int_matrix(value, name: str, source: str, *, ndim: int, allow_negative=False) -> np.ndarray:
    """Validate ``value`` as a read-only int64 array of ``ndim`` dimensions.

    Accepts integers and, since some JSON writers write every number as a
    float, floats with an integral value (``3.0`` reads as 3).  Refuses
    booleans (``true`` is not a count, not even mixed into a list of
    numbers), fractions, NaN and infinities, strings and ``None``, values
    outside the int64 range (a JSON integer Python reads as a big int), and
    negative entries unless ``allow_negative``.  Never clips or rounds.

    Raises
    ------
    InstanceError
        One line naming ``source``, the field ``name`` and the bad entry.

    Notes
    -----
    O(size): a numpy integer array costs one copy; Python lists are
    scanned entry by entry, so mixed lists keep big integers exact.
    """
    arr = _numbers(value, name, source, ndim)
    if arr.size == 0:
        arr = np.zeros(arr.shape if arr.ndim == ndim else (0,) * ndim, dtype=np.int64)
    elif arr.dtype == object:  # Python numbers
        isf = np.fromiter((isinstance(x, (float, np.floating)) for x in arr.flat), bool, arr.size)
        if isf.any():
            pos = np.flatnonzero(isf)
            _integral(arr.ravel()[pos].astype(float), arr, pos, name, source)
        ints = [int(x) for x in arr.flat]
        big = next((f for f, x in enumerate(ints) if not INT64_MIN <= x <= INT64_MAX), None)
        if big is not None:
            raise InstanceError(f"{source}: field '{name}' has {ints[big]}{_at(arr, big)}, beyond the int64 range")
        arr = np.array(ints, dtype=np.int64).reshape(arr.shape)
    elif arr.dtype.kind == "f":
        _integral(arr.ravel(), arr, np.arange(arr.size), name, source)
    elif arr.dtype.kind == "u" and int(arr.max()) > INT64_MAX:
        big = int(np.argmax(arr.ravel()))
        raise InstanceError(f"{source}: field '{name}' has {int(arr.flat[big])}{_at(arr, big)}, "
                            "beyond the int64 range")
    arr = arr.astype(np.int64)
    if not allow_negative and arr.size and arr.min() < 0:
        idx = np.unravel_index(int(np.argmin(arr)), arr.shape)
        raise InstanceError(f"{source}: field '{name}' has a negative entry {arr[idx]} at {list(map(int, idx))}")
    arr.setflags(write=False)
    return arr


def float_array(value, name: str, source: str, *, ndim: int | None = None, finite: bool = True) -> np.ndarray:
    """Validate ``value`` as a read-only float array of ``ndim`` dimensions
    (any when ``None``; 0 for a scalar).

    Refuses what :func:`int_matrix` refuses short of fractions: booleans,
    strings, ``None``, NaN and infinities (``finite=False`` leaves those to
    a caller whose range check names them), and integers too large for a
    float (a JSON integer beyond about 1.8e308).  Range checks (positive,
    non-negative) stay with the caller.

    Raises
    ------
    InstanceError
        One line naming ``source``, the field ``name`` and the bad entry.

    Notes
    -----
    O(size); Python lists are scanned entry by entry.
    """
    arr = _numbers(value, name, source, ndim)
    try:
        out = np.array(arr, dtype=float)
    except OverflowError:
        big = next(f for f, x in enumerate(arr.flat) if not _fits_float(x))
        raise InstanceError(f"{source}: field '{name}' has a number too large for a float{_at(arr, big)}") from None
    bad = ~np.isfinite(out) if finite else None
    if finite and bad.any():
        k = int(np.argmax(bad.ravel()))
        raise InstanceError(f"{source}: field '{name}' has a non-finite entry {float(out.flat[k])}{_at(out, k)}")
    out.setflags(write=False)
    return out


def _fits_float(x) -> bool:
    try:
        float(x)
    except OverflowError:
        return False
    return True


def float_vector(value, name: str, source: str, n: int) -> np.ndarray:
    """Validate ``value`` as ``n`` finite floats, read-only: the refusals of
    :func:`float_array`, and a shape other than ``(n,)``."""
    arr = float_array(value, name, source)
    if arr.shape != (n,):
        raise InstanceError(f"{source}: field '{name}' must have length {n}, got shape {arr.shape}")
    return arr


def profit_vector(value, source: str, n: int) -> np.ndarray:
    """Field ``profit``: :func:`float_vector`, no negative entry (a job is
    never worth less than idling), and a sum a float can hold (the value of
    taking every job; beyond it the exact models' scaling failed with "math
    domain error")."""
    prof = float_vector(value, "profit", source, n)
    if prof.size and prof.min() < 0:
        raise InstanceError(f"{source}: field 'profit' has a negative entry {prof.min()} at {int(np.argmin(prof))}")
    with np.errstate(over="ignore"):
        total = float(prof.sum())
    if not np.isfinite(total):
        raise InstanceError(f"{source}: field 'profit' sums to more than a float can hold (1.8e308); "
                            "scale the profits down")
    return prof


class _KeyTwice(ValueError):
    """A JSON object that names one key twice (``json`` keeps the last)."""


def _unique_keys(pairs: list) -> dict:
    """``object_pairs_hook`` of :func:`read_json`: the object, or
    :class:`_KeyTwice` naming a key given twice."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _KeyTwice(key)
            seen.add(key)
    return out


def read_json(path: str | Path, *, kind: bool = True):
    """Parse the JSON file ``path``; with ``kind`` it must be an object with a
    string field ``kind``.

    Every failure is an :class:`InstanceError` of one line naming the file
    (and the field where there is one): missing file, a folder, unreadable or
    non-UTF-8 bytes, invalid JSON, nesting too deep, ``NaN`` / ``Infinity``
    literals or numbers beyond float range (``1e400``), integers beyond
    int64, an object that names a key twice.  Cost O(size of the file).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"), object_pairs_hook=_unique_keys)
    except _KeyTwice as exc:
        raise InstanceError(f"{path}: field '{exc.args[0]}' given twice in one object") from None
    except FileNotFoundError:
        raise InstanceError(f"{path}: no such file") from None
    except IsADirectoryError:
        hint = ("; a family folder (manifest.json) is read whole by read_family, or scored by eb.score(folder)"
                if (path / "manifest.json").is_file() else "")
        raise InstanceError(f"{path}: is a folder, expected a JSON file{hint}") from None
    except OSError as exc:
        raise InstanceError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{path}: not valid JSON ({exc})") from None
    except (ValueError, RecursionError) as exc:   # int beyond str-digits limit, nesting too deep
        raise InstanceError(f"{path}: not valid JSON ({type(exc).__name__}: {exc})") from None
    bad = _bad_number(data, "")
    if bad is not None:
        raise InstanceError(f"{path}: field '{bad[0] or '(top)'}' holds {bad[1]}")
    if kind:
        if not isinstance(data, dict):          # said "field 'kind' missing" of an array
            what = {list: "an array", str: "a string", bool: "a boolean",
                    type(None): "null"}.get(type(data), "a number")
            raise InstanceError(f"{path}: a JSON object with 'kind' expected, got {what}")
        if "kind" not in data:
            hint = ("; this is a family folder's manifest: read the folder with read_family, or score it with "
                    "eb.score(folder)" if "instances" in data and "generator" in data else "")
            raise InstanceError(f"{path}: field 'kind' missing (expected a JSON object with 'kind'){hint}")
        if not isinstance(data["kind"], str):
            got = {bool: "a boolean", int: "a number", float: "a number", list: "an array", dict: "an object",
                   type(None): "null"}.get(type(data["kind"]), "something else")
            raise InstanceError(f"{path}: field 'kind' must be a string, got {got}")
    return data


_INT64 = 2**63


def _bad_number(obj, where: str):
    """``(field path, description)`` of the first number JSON may parse but
    no array can hold (NaN, +-inf, an integer beyond int64), else None."""
    stack = [(obj, where)]
    while stack:
        x, at = stack.pop()
        if isinstance(x, dict):
            stack.extend((v, f"{at}.{k}" if at else str(k)) for k, v in reversed(list(x.items())))
        elif isinstance(x, list):
            stack.extend((v, f"{at}[{i}]") for i, v in reversed(list(enumerate(x))))
        elif isinstance(x, float) and not math.isfinite(x):
            return at, f"{x} (NaN, Infinity or a number beyond float range)"
        elif isinstance(x, int) and not isinstance(x, bool) and not -_INT64 <= x < _INT64:
            return at, "an integer beyond the int64 range"
    return None


def meta_dict(meta, source: str) -> dict:
    """An instance's ``meta`` as a new dict (None: empty); anything but a
    mapping is an :class:`InstanceError` naming it (``meta=[1]`` raised
    dict()'s own TypeError).  O(len(meta))."""
    from collections.abc import Mapping
    if meta is None:
        return {}
    if not isinstance(meta, Mapping):
        raise InstanceError(f"{source}: field 'meta' must be a dict (an object), got {type(meta).__name__}")
    return dict(meta)


def json_file_text(path: str | Path, data: dict) -> str:
    """``data`` as the compact JSON :func:`write_json` writes to ``path``,
    checked first: a number that :func:`read_json` refuses (NaN, an
    infinity, an integer beyond int64: in ``meta`` too) or a value JSON
    cannot hold (a set, an object) is an :class:`InstanceError` naming the
    field (``eb.save`` wrote files ``eb.load`` then refused, or failed in
    json's own TypeError)."""
    plain = _plain(data)
    bad = _bad_number(plain, "")
    if bad is not None:
        raise InstanceError(f"{path}: field '{bad[0] or '(top)'}' holds {bad[1]}: not written (it would not "
                            "read back)")
    try:
        return json.dumps(plain, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{path}: not written: {exc} (a field holds what JSON cannot)") from None


def write_json(path: str | Path, data: dict) -> None:
    """Write ``data`` as compact JSON, atomically (:func:`epochbench.instances.files.write_text`),
    checked by :func:`json_file_text`: nothing is written when it fails."""
    from .files import write_text
    write_text(path, json_file_text(path, data))


def gap(value: float | None, bound: float | None, eps: float = 1e-9) -> float:
    """Relative gap ``|bound - value| / |bound|`` (ARCHITECTURE.md).

    ``bound`` is the reference (a proven optimum, a best-known value or a
    valid bound; ``epochbench.scoring.reference`` picks it).  NaN when either side
    is missing (``None``), NaN or infinite: no reference, no number.  A
    difference within float rounding (``1e-12`` relative to the larger side)
    is a gap of 0, not ``1e-16``.  Both are relative at any scale: objectives
    of 1e-10 have the gaps they would have at 1.

    A reference of 0 has no scale to be relative to: a ``value`` within
    ``eps`` of it (absolute: the float noise of a sum or of a cost's offset
    that cancels to about 0) has gap 0, any other has gap 1 (100 %, as
    ``|ref - value| / max(|ref|, |value|)`` gives): it is not at the
    reference, and a summary counts it so.  (The difference was divided by
    ``eps``, so a value 1e-9 from 0 had a gap of 100 % and one 1e-6 from it
    100,000 %, numbers that measure eps; ``inf``, the limit of the ratio,
    would be the mean of every gap it enters and is no JSON number.)

    Examples
    --------
    >>> gap(0.5, 1.0)
    0.5
    >>> gap(0.0, 0.0), gap(5e-10, 0.0), gap(1e-6, 0.0), gap(7.0, 0.0), gap(1.0, None)
    (0.0, 0.0, 1.0, 1.0, nan)
    """
    if bound is None or value is None:
        return math.nan
    value, bound = float(value), float(bound)
    if not (math.isfinite(value) and math.isfinite(bound)):
        return math.nan
    diff = abs(bound - value)
    if diff <= 1e-12 * max(abs(bound), abs(value)):
        return 0.0
    if bound == 0:
        return 0.0 if diff <= eps else 1.0
    return diff / abs(bound)
