"""The compiled SWF line parser behind :func:`epochbench.instances.jobs.read_swf`.

One pass over the bytes, no Python object per line or field: a job line's 18
whitespace-separated numbers go straight into a float64 row.  A number is
``[+-]digits[.digits][(e|E)[+-]digits]``; it is converted exactly (one
multiplication or division of two exactly representable float64 values,
hence correctly rounded, as ``strtod`` does) while it has at most 15
significant digits and a decimal exponent within 22, which covers every
trace of the Parallel Workloads Archive.  Anything else (another character,
more digits, a line of other than 18 fields) stops the parser and reports
where, so that the caller can fall back to a general reader or name the
line.  Compiled on first use (cached), never at import.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_POW10 = np.array([10.0 ** k for k in range(23)])
#: the parser's verdicts
OK, BAD = 0, 1


@njit(cache=True, nogil=True)
def _number(buf, k, end, pow10):
    """Parse the number starting at ``buf[k]``; returns (value, next index, ok)."""
    neg = False
    c = buf[k]
    if c == 45 or c == 43:                      # '-' '+'
        neg = c == 45
        k += 1
    mant = 0
    digits = 0
    frac = 0
    seen = False
    while k < end and 48 <= buf[k] <= 57:
        if mant > 0 or buf[k] != 48:
            digits += 1
        mant = mant * 10 + (buf[k] - 48)
        seen = True
        k += 1
    if k < end and buf[k] == 46:                # '.'
        k += 1
        while k < end and 48 <= buf[k] <= 57:
            if mant > 0 or buf[k] != 48:
                digits += 1
            mant = mant * 10 + (buf[k] - 48)
            frac += 1
            seen = True
            k += 1
    if not seen or digits > 15:
        return 0.0, k, False
    exp = 0
    if k < end and (buf[k] == 101 or buf[k] == 69):   # 'e' 'E'
        k += 1
        eneg = False
        if k < end and (buf[k] == 45 or buf[k] == 43):
            eneg = buf[k] == 45
            k += 1
        if k >= end or not 48 <= buf[k] <= 57:
            return 0.0, k, False
        while k < end and 48 <= buf[k] <= 57:
            exp = exp * 10 + (buf[k] - 48)
            if exp > 400:
                return 0.0, k, False
            k += 1
        if eneg:
            exp = -exp
    if k < end:
        c = buf[k]
        if not (c == 32 or c == 9 or c == 13 or c == 11 or c == 12 or c == 59):
            return 0.0, k, False                 # a character that is not part of a number
    p = exp - frac
    value = float(mant)
    if mant != 0:
        if p > 22 or p < -22:
            return 0.0, k, False
        value = value * pow10[p] if p >= 0 else value / pow10[-p]
    return (-value if neg else value), k, True


@njit(cache=True, nogil=True)
def parse_lines(buf, out, final, pow10):
    """Parse the complete job lines of ``buf`` (uint8) into the rows of ``out``
    (float64, rows x 18).

    Comment text (from ``;`` to the line end) and blank lines are skipped.
    A line without a newline at the end of ``buf`` is left for the next call
    unless ``final``.  Returns ``(rows, used, verdict)``: rows filled, bytes
    consumed (the start of the first line not parsed) and :data:`OK`, or
    :data:`BAD` with ``used`` at the start of the offending line.  Stops early,
    with verdict OK, when ``out`` is full.  O(len(buf)).
    """
    n = buf.shape[0]
    cap = out.shape[0]
    i = 0
    r = 0
    while i < n:
        j = i
        while j < n and buf[j] != 10:
            j += 1
        if j == n and not final:
            break
        if r >= cap:
            break
        k = i
        f = 0
        while k < j:
            c = buf[k]
            if c == 59:                          # ';': comment to the line end
                break
            if c == 32 or c == 9 or c == 13 or c == 11 or c == 12:
                k += 1
                continue
            if f >= 18:
                return r, i, BAD
            value, k, ok = _number(buf, k, j, pow10)
            if not ok:
                return r, i, BAD
            out[r, f] = value
            f += 1
        if f == 18:
            r += 1
        elif f != 0:
            return r, i, BAD
        i = j + 1
    return r, min(i, n), OK
