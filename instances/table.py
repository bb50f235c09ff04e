"""A job table as named numpy columns, for the paths that must not pay for pandas.

:class:`Columns` is what the readers of :mod:`epochbench.instances.jobs`
build and what the simulator's fast path reads and writes: an ordered
mapping of column name to a 1-D numpy array, all of one length.  It offers
the few table operations those paths need (select, take rows, add columns,
write CSV) and :meth:`Columns.to_frame` for everything else; pandas is
imported only there.  ``table[name]`` returns the array itself (no copy), so
``np.asarray(table[name])`` reads a column of a :class:`Columns` and of a
DataFrame alike.
"""
from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from typing import Iterable, Mapping

import numpy as np


class Columns:
    """Named 1-D numpy columns of equal length, in insertion order.

    Parameters
    ----------
    data : mapping of str to array-like
        The columns; each becomes a 1-D numpy array (no copy when it is one).

    Notes
    -----
    Selecting and adding columns costs O(1) per column; :meth:`take` and
    :meth:`mask` copy the selected rows of every column, O(n) each.
    """

    __slots__ = ("_cols", "_n")

    def __init__(self, data: Mapping[str, Iterable] | None = None):
        self._cols: dict[str, np.ndarray] = {}
        self._n = None
        for name, values in (data or {}).items():
            self[name] = values

    # -- mapping -------------------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        """Column names in order."""
        return list(self._cols)

    def __len__(self) -> int:
        """Number of rows."""
        return 0 if self._n is None else self._n

    def __contains__(self, name) -> bool:
        return name in self._cols

    def __getitem__(self, key):
        """One column's array, or a :class:`Columns` of a list of names."""
        if isinstance(key, (list, tuple)):
            return Columns({k: self._cols[k] for k in key})
        return self._cols[key]

    def __setitem__(self, name: str, values) -> None:
        arr = np.asarray(values)
        if arr.ndim == 0 and arr.dtype == object and isinstance(arr[()], Iterator):
            raise ValueError(f"column {name!r} is a {type(arr[()]).__name__}; give a list or an array")
        if arr.ndim == 0 and self._n is not None:
            arr = np.full(self._n, arr[()])
        if arr.ndim != 1:
            raise ValueError(f"column {name!r} must be 1-D, got shape {arr.shape}")
        if self._n is not None and arr.shape[0] != self._n and (self._cols.keys() - {name}):
            raise ValueError(f"column {name!r} has {arr.shape[0]} rows, the table {self._n}")
        self._cols[name] = arr
        self._n = arr.shape[0]

    def __delitem__(self, name: str) -> None:
        del self._cols[name]

    def items(self):
        return self._cols.items()

    def get(self, name, default=None):
        return self._cols.get(name, default)

    def insert(self, position: int, name: str, values) -> None:
        """Add column ``name`` at ``position`` (as :meth:`pandas.DataFrame.insert`)."""
        self[name] = values
        arr = self._cols.pop(name)
        items = list(self._cols.items())
        items.insert(position, (name, arr))
        self._cols = dict(items)

    # -- rows ----------------------------------------------------------------------------
    def take(self, rows) -> "Columns":
        """The rows ``rows`` (integer positions) of every column, copied."""
        rows = np.asarray(rows)
        return Columns({k: v[rows] for k, v in self._cols.items()})

    def mask(self, keep) -> "Columns":
        """The rows where ``keep`` is True; the table itself when all are."""
        keep = np.asarray(keep, dtype=bool)
        return self if keep.all() else Columns({k: v[keep] for k, v in self._cols.items()})

    def select(self, names: Iterable[str]) -> "Columns":
        """The columns ``names``, in that order (no copy)."""
        return Columns({k: self._cols[k] for k in names})

    def assign(self, **cols) -> "Columns":
        """A new table with ``cols`` added or replaced (arrays shared, not copied)."""
        out = Columns(self._cols)
        for k, v in cols.items():
            out[k] = v
        return out

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(v.nbytes for v in self._cols.values())

    # -- conversion ----------------------------------------------------------------------
    @classmethod
    def from_frame(cls, df) -> "Columns":
        """The columns of a DataFrame as arrays (views where pandas allows);
        ValueError for a name given twice (pandas returns both columns for
        it, which read as one 2-D column)."""
        from .checks import first_repeat
        names = [str(c) if not isinstance(c, str) else c for c in df.columns]
        twice = first_repeat(names)
        if twice is not None:
            raise ValueError(f"column {twice!r} given twice")
        return cls({name: df.iloc[:, k].to_numpy() for k, name in enumerate(names)})

    def to_frame(self, copy: bool = False):
        """A :class:`pandas.DataFrame` over these arrays (imports pandas);
        ``copy``: of copies of them, which the frame's user may edit."""
        import pandas as pd
        if not self._cols:
            return pd.DataFrame()
        return pd.DataFrame(self._cols, copy=copy)

    def to_arrow(self):
        """A :class:`pyarrow.Table` of these columns (NaN kept as null in float columns)."""
        import pyarrow as pa
        return pa.Table.from_arrays([_arrow_array(v) for v in self._cols.values()], names=list(self._cols))

    def csv_bytes(self, *, header: bool = True, delimiter: str = ",") -> bytes:
        """The table as CSV text through pyarrow's writer; NaN as an empty field."""
        buf = io.BytesIO()
        self.write_csv(buf, header=header, delimiter=delimiter)
        return buf.getvalue()

    def write_csv(self, sink, *, header: bool = True, delimiter: str = ",") -> None:
        """Write the table as CSV to ``sink`` (a path or a binary file) with
        pyarrow's writer: whole columns at a time, no per-row Python work.
        A table of numbers and booleans is written without quotes (as
        pandas does); text columns are quoted where they need it."""
        import pyarrow.csv as pacsv
        plain = all(v.dtype.kind in "biuf" for v in self._cols.values())
        bare = plain and not any(set(name) & {delimiter, '"', "\n", "\r"} for name in self._cols)
        if not (header and bare):
            pacsv.write_csv(self.to_arrow(), sink, pacsv.WriteOptions(
                include_header=header, delimiter=delimiter, quoting_style="none" if plain else "needed"))
            return
        with contextlib.ExitStack() as stack:      # pyarrow quotes every header name: write it here
            out = stack.enter_context(open(sink, "wb")) if isinstance(sink, (str, os.PathLike)) else sink
            out.write((delimiter.join(self._cols) + "\n").encode())
            if len(self):
                pacsv.write_csv(self.to_arrow(), out, pacsv.WriteOptions(
                    include_header=False, delimiter=delimiter, quoting_style="none"))

    def __repr__(self) -> str:
        return f"Columns({len(self)} rows: {', '.join(self._cols)})"


def _arrow_array(v: np.ndarray):
    """Column ``v`` as a pyarrow array, NaN as null.  Numbers and booleans
    are handed over as buffers (``pyarrow.array`` on a numpy array imports
    pandas, 0.18 s of a short ``simulate --out``, to ask whether it is a
    pandas object); other kinds go through ``pyarrow.array``.  A float -0.0
    becomes 0.0 (in a copy), so that no CSV, SWF or Parquet file says "-0"."""
    import pyarrow as pa
    n = len(v)
    if v.dtype.kind == "f" and (np.signbit(v) & (v == 0)).any():
        v = v + 0.0                                  # -0.0 as 0.0: no written table holds "-0"
    if v.dtype.kind == "b":
        return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(np.packbits(v, bitorder="little"))])
    if v.dtype.kind in "iuf" and v.dtype.byteorder in "=|":
        data = pa.py_buffer(np.ascontiguousarray(v))
        missing = np.isnan(v) if v.dtype.kind == "f" else None
        nulls = int(missing.sum()) if missing is not None else 0
        valid = pa.py_buffer(np.packbits(~missing, bitorder="little")) if nulls else None
        return pa.Array.from_buffers(pa.from_numpy_dtype(v.dtype), n, [valid, data], null_count=nulls)
    if v.dtype.kind == "O":
        return pa.array(v.tolist())
    return pa.array(v)


def as_columns(table) -> Columns:
    """``table`` as :class:`Columns`: itself, a DataFrame's columns, or a
    mapping's; anything else (a list of row dicts) is an ``InstanceError``
    saying what a table is (it raised an AttributeError from inside)."""
    from collections.abc import Mapping
    if isinstance(table, Columns):
        return table
    if hasattr(table, "iloc"):
        return Columns.from_frame(table)
    if not isinstance(table, Mapping):
        from .core import InstanceError
        rows = " (of rows: pandas.DataFrame(rows) makes one)" if isinstance(table, (list, tuple)) else ""
        raise InstanceError(f"jobs: expected a pandas DataFrame or a dict of columns, got "
                            f"{type(table).__name__}{rows}")
    return Columns(table)


def in_arrival_order(submit: np.ndarray, ids: np.ndarray) -> bool:
    """Rows already sorted by (submit, id)?  O(n), no sort: job tables usually
    are, so the sort they would need is skipped."""
    if len(submit) < 2:
        return True
    before, after = submit[:-1], submit[1:]
    if not (after >= before).all():
        return False
    tie = after == before
    return not tie.any() or bool((ids[1:][tie] > ids[:-1][tie]).all())


def narrowest_int(values: np.ndarray) -> np.ndarray:
    """``values`` (integers) in the narrowest signed integer type that holds
    them all (int8 to int64); the array itself when it already is."""
    if values.size == 0:
        return values.astype(np.int8)
    lo, hi = int(values.min()), int(values.max())
    for t in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            return values if values.dtype == t else values.astype(t)
    return values
