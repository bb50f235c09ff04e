"""Strict pieces shared by the families' independent feasibility checkers.

A decision names jobs, machines or tasks by index.  Every checker reads
those indices here, so that all five families refuse the same things:

* an index is a Python ``int`` or a numpy integer (scalar or array entry);
  never a float (not even ``2.0``), a boolean (``True`` is an ``int`` in
  Python, and a numpy boolean array indexes as a mask), a string, or a
  nested sequence where a number belongs;
* a decision is a list, tuple, ``range`` or numpy array (no strings, sets,
  dicts or other iterables, whose order or meaning is not a decision's);
* indices lie in range; repeats are refused where the family forbids them.

Capacity sums are exact (:func:`exact_loads`, :func:`exact_bin_loads`):
int64 when a bound on the magnitudes proves that no sum can wrap, Python
integers otherwise.  Nothing here calls a solver.
"""
from __future__ import annotations

import math

import numpy as np

from .core import INT64_MAX, InfeasibleSolution

#: what a decision (or one level of a nested decision) may be
SEQUENCES = (list, tuple, range, np.ndarray)


def split_names(text: str, what: str) -> list[str]:
    """The names in ``text``, separated by commas and blanks (``"ff,bl"``,
    ``"ff bl"``, ``"ff, bl"``); ValueError naming ``what`` for an empty
    item, two commas in a row or one at an end (``"ff,,bl"``, ``"ff,"``: a
    typo, whose name was dropped silently).

    Examples
    --------
    >>> split_names("ff, bl bb", "--methods")
    ['ff', 'bl', 'bb']
    """
    parts = [p.split() for p in str(text).split(",")]
    if len(parts) > 1 and not all(parts):
        raise ValueError(f"{what}: an empty item in {text!r} (two commas in a row, or one at an end)")
    return [name for part in parts for name in part]


def first_repeat(items):
    """The first item of ``items`` that an earlier one equals, or None.
    O(len(items)) for hashable items."""
    seen = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return None


def recorded_choice(inst) -> list[int]:
    """The choice a policy made at a recorded step (``meta["choice"]``, as
    ``epochbench simulate --record-epochs`` writes it), read strictly: a
    list of job indices of ``inst`` (0.5, ``true`` or ``"1"`` were read
    through ``int()``).  :class:`~epochbench.instances.core.InstanceError`
    naming the instance otherwise.  O(len(choice))."""
    from .core import InstanceError
    if "choice" not in inst.meta:
        raise InstanceError(f"{inst.name}: no recorded choice (meta['choice']); only instances written "
                            "by 'epochbench simulate --record-epochs' have one")
    choice = inst.meta["choice"]
    where = f"{inst.name}: recorded choice (meta['choice'])"
    if not isinstance(choice, list):
        raise InstanceError(f"{where} must be a list of job indices, got {short(choice, 40)}")
    try:
        return list(indices(choice, inst.n, where))
    except InfeasibleSolution as exc:          # the file is wrong, not a method's answer
        raise InstanceError(str(exc)) from None


def short(value, width: int = 60) -> str:
    """``repr(value)`` on one line (runs of white space as one space: an
    instance's repr spans lines) cut to ``width`` characters, for one-line
    messages."""
    text = repr(value) if not isinstance(value, np.ndarray) else repr(value.tolist())
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def index(value, where: str, noun: str) -> int:
    """``value`` as a Python int if it is an integer (Python or numpy, not a
    boolean); else :class:`InfeasibleSolution` naming ``where``."""
    if isinstance(value, (bool, np.bool_)):
        raise InfeasibleSolution(f"{where} is {value!r}, a boolean, not a {noun} index")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        raise InfeasibleSolution(f"{where} is {value!r}, not an integer {noun} index")
    raise InfeasibleSolution(f"{where} is {short(value, 40)} ({type(value).__name__}), not a {noun} index")


def indices(values, size: int, where: str, *, noun: str = "job", item: str = "entry") -> tuple[int, ...]:
    """A flat decision as a tuple of Python ints in ``0..size-1``.

    Parameters
    ----------
    values : list, tuple, range or 1-D numpy array
        The indices; a numpy array must have an integer dtype (or be empty).
    size : int
        Number of valid indices.
    where : str
        Start of every message, e.g. ``"inst: selection"``.
    noun, item : str
        What an index names (``job``, ``machine``) and what an entry is
        called in messages (``entry``, ``task``).

    Returns
    -------
    tuple of int

    Raises
    ------
    InfeasibleSolution
        One line naming the first bad entry.

    Notes
    -----
    O(len(values)): one pass in Python (a numpy array: one ``tolist``).
    """
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise InfeasibleSolution(f"{where} is an array of shape {values.shape}, not a sequence of {noun} indices")
        if values.dtype.kind in "iu" or values.size == 0:
            out = tuple(values.tolist())
        elif values.dtype == object:
            out = tuple(index(v, f"{where} {item} {i}", noun) for i, v in enumerate(values))
        else:
            raise InfeasibleSolution(f"{where} is an array of {values.dtype}, not of integer {noun} indices")
    elif isinstance(values, SEQUENCES):
        out = tuple(v if type(v) is int else index(v, f"{where} {item} {i}", noun) for i, v in enumerate(values))
    else:
        raise InfeasibleSolution(f"{where} {short(values, 40)} ({type(values).__name__}) is not a sequence "
                                 f"of {noun} indices")
    if out and (min(out) < 0 or max(out) >= size):
        i = next(i for i, v in enumerate(out) if not 0 <= v < size)
        valid = f"outside 0..{size - 1}" if size > 0 else f"and there is no {noun} (none to choose from)"
        raise InfeasibleSolution(f"{where} {item} {i} is {noun} {out[i]}, {valid}")
    return out


def distinct(out: tuple[int, ...], where: str, verb: str, noun: str = "job") -> None:
    """Refuse an index that occurs twice in ``out``: ``"{where} {verb} {noun} J twice"``.  O(len(out))."""
    if len(set(out)) != len(out):
        raise InfeasibleSolution(f"{where} {verb} {noun} {first_repeat(out)} twice")


def _fits_int64(rows: np.ndarray, count: int, base) -> bool:
    """True if every sum of ``count`` rows of ``rows`` plus ``base`` provably
    stays inside int64: ``count * max|rows| + max|base| <= 2**63 - 1``,
    in Python integers.  O(rows.size)."""
    if rows.dtype.kind not in "iu" or (base is not None and base.dtype.kind not in "iu"):
        return False
    top = max(int(rows.max()), -int(rows.min())) if rows.size else 0
    low = max(int(base.max()), -int(base.min())) if base is not None and base.size else 0
    return count * top + low <= INT64_MAX


def subset_sums_fit(holder, name: str, matrix: np.ndarray, base: np.ndarray | None = None) -> bool:
    """Whether every sum of distinct rows of ``matrix`` plus ``base`` provably
    fits int64 (:func:`_fits_int64` over the whole matrix, any number of its
    rows), cached as ``holder.__dict__["_sums_fit_" + name]``: a read-only
    instance checked again and again (a simulated step's four solves), whose
    arrays never change.  O(matrix.size) once."""
    key = "_sums_fit_" + name
    fit = holder.__dict__.get(key)
    if fit is None:
        fit = _fits_int64(matrix, matrix.shape[0], base)
        holder.__dict__[key] = fit
    return fit


def exact_loads(matrix: np.ndarray, idx: tuple[int, ...], base: np.ndarray | None = None, *,
                fits: bool = False) -> np.ndarray:
    """``base + matrix[idx].sum(axis=0)``, exact.

    int64 when :func:`_fits_int64` proves that no partial sum can wrap (the
    usual case), else an object array of Python integers.  Compare the
    result with a capacity as it is: numpy compares an int64 or Python-int
    array with an int64 one exactly.  ``fits=True``: the caller proved it
    for every set of rows (:func:`subset_sums_fit`), not proved again here.

    Notes
    -----
    O(len(idx) K); the Python-integer path is about 50 times slower and is
    taken only for magnitudes near 2**63 / len(idx).
    """
    rows = matrix[np.asarray(idx, dtype=np.intp)] if idx else matrix[:0]
    if fits or _fits_int64(rows, len(idx), base):
        load = rows.sum(axis=0, dtype=np.int64)
        return load if base is None else load + base.astype(np.int64)
    load = rows.astype(object).sum(axis=0) if idx else np.zeros(matrix.shape[1], dtype=np.int64).astype(object)
    return load if base is None else load + base.astype(object)


def exact_bin_loads(matrix: np.ndarray, bins: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """Per-bin column sums of ``matrix`` (one row per bin), exact as in
    :func:`exact_loads`.  Every bin must be non-empty.  O(n K)."""
    order = np.fromiter((j for b in bins for j in b), dtype=np.intp)
    starts = np.cumsum([0] + [len(b) for b in bins[:-1]])
    rows = matrix[order]
    if _fits_int64(rows, max(map(len, bins)), None):
        return np.add.reduceat(rows.astype(np.int64, copy=False), starts, axis=0)
    return np.add.reduceat(rows.astype(object), starts, axis=0)


def over(load: np.ndarray, capacity: np.ndarray) -> int | None:
    """First resource on which ``load`` exceeds ``capacity`` (None if none)."""
    bad = np.asarray(load > capacity, dtype=bool).ravel()
    first = int(bad.argmax()) if bad.size else 0      # the first True (argmax: a third of flatnonzero's time)
    return first if bad.size and bad[first] else None


def is_int(value) -> bool:
    """A Python or numpy integer; not a bool (True is no count, though an int)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value) -> bool:
    """A Python or numpy integer or float; no bool (numpy's neither), no
    string ("0.5" is not read as a number: ``float()`` would take it, and
    True, silently)."""
    return is_int(value) or isinstance(value, (float, np.floating))


def is_whole(value) -> bool:
    """A whole number: a Python or numpy integer, or a finite float with no
    fraction (``1e3``, ``2.0`` as JSON or ``--param`` give them); no bool."""
    return is_int(value) or (is_number(value) and math.isfinite(value) and float(value).is_integer())


def check_count(name: str, option: str, value, low: int) -> None:
    """ValueError unless ``value`` is a whole number of iterations, hops,
    draws or machines, at least ``low`` (a whole float such as ``1e3`` too,
    as ``--param`` reads it); the message names method ``name`` and its option."""
    if not is_whole(value) or value < low:
        raise ValueError(f"{name}: option {option!r} must be an integer >= {low}, got {value!r}")


def check_share(name: str, option: str, value) -> None:
    """ValueError unless ``value`` is a number in [0, 1] (a rate, a share of a time limit)."""
    if not is_number(value) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name}: option {option!r} must lie in [0, 1], got {value!r}")


def check_flag(name: str, option: str, value) -> None:
    """ValueError unless ``value`` is True or False (a Python or numpy bool):
    a string such as ``'no'`` is true to ``if``, so it would switch the
    option on without a word."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: option {option!r} must be True or False, got {value!r}")


def check_positive(name: str, option: str, value, zero: bool = False) -> None:
    """ValueError unless ``value`` is a finite number > 0 (>= 0 with ``zero``)."""
    if not is_number(value) or not math.isfinite(value) or not (value >= 0 if zero else value > 0):
        raise ValueError(f"{name}: option {option!r} must be a finite number {'>=' if zero else '>'} 0, "
                         f"got {value!r}")


def with_article(noun: str) -> str:
    """``noun`` with its article, for messages: ``an int``, ``a str``."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


__all__ = ["SEQUENCES", "short", "index", "indices", "distinct", "subset_sums_fit", "exact_loads", "exact_bin_loads",
           "over", "is_int", "is_number", "with_article"]
