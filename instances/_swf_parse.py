"""The compiled SWF line parser behind :func:`epochbench.instances.jobs.read_swf`.

One pass over the bytes, no Python object per line or field: a job line's 18
whitespace-separated numbers go straight into a float64 row.  A number is
``[+-]digits[.digits][(e|E)[+-]digits]``; it is converted exactly (one
multiplication or division of two exactly representable float64 values,
hence correctly rounded, as ``strtod`` does) while it has at most 15
significant digits and a decimal exponent within 22, which covers every
trace of the Parallel Workloads Archive.  Anything else (another character,
more digits, a line of other than 18 fields, a fraction or more than 2**53
in an integer field) stops the parser and reports where, so that the caller
can fall back to a general reader or name the line.  Compiled on first use
(cached), never at import.
"""
from __future__ import annotations

import numpy as np

from .lazy import njit

_POW10 = np.array([10.0 ** k for k in range(23)])
#: the parser's verdicts: all parsed; a line it does not read; ``out`` has no room left
OK, BAD, FULL = 0, 1, 2
#: 2**53: the largest integer field value (beyond it float64 does not hold every integer)
INT_LIMIT = 2.0 ** 53


@njit(cache=True, nogil=True)
def parse_lines(buf, out, ints, row, dest, is_int, final, pow10):
    """Parse the complete job lines of ``buf`` (uint8) into ``out`` (float64)
    and ``ints`` (int64), one row per kept field, one column per job, from
    column ``row`` on, in one pass over the bytes (one loop, no call per
    number: about 400 MB/s).

    Field f (0..17) of a line must be an integer of at most :data:`INT_LIMIT`
    in absolute value when ``is_int[f]``, and goes to ``ints[dest[f], job]``
    (integer fields) or ``out[dest[f], job]`` (the others), or nowhere when
    ``dest[f]`` < 0.  Comment text (from ``;`` to the
    line end) and blank lines are skipped.  A line without a newline at the
    end of ``buf`` is left for the next call unless ``final``.  Returns
    ``(jobs, used, verdict)``: the next free column, bytes consumed (the start
    of the first line not parsed) and :data:`OK`; :data:`BAD` with ``used`` at
    the start of a line it does not read; :data:`FULL` when ``out`` has no
    column left for the next line.  O(len(buf)).
    """
    n = buf.shape[0]
    cap = out.shape[1]
    i = 0
    r = row
    f = 0
    line = 0                                     # where the current line starts
    while i < n:
        c = buf[i]
        if c == 10:                              # '\n': the line is complete
            if f == 18:
                r += 1
            elif f != 0:
                return r, line, BAD
            f = 0
            i += 1
            line = i
            continue
        if c == 59:                              # ';': comment to the line end
            while i < n and buf[i] != 10:
                i += 1
            continue
        if c == 32 or c == 9 or c == 13 or c == 11 or c == 12:
            i += 1
            continue
        if f >= 18:
            return r, line, BAD
        if r >= cap:
            return r, line, FULL
        # a number: [+-]digits[.digits][(e|E)[+-]digits].  The three digit loops are
        # written out: a helper, even inlined by numba, made the parser 1.7x slower
        neg = c == 45
        if neg or c == 43:
            i += 1
        mant = 0
        nd = 0
        frac = 0
        while i < n:
            d = np.int64(buf[i]) - 48
            if d < 0 or d > 9:
                break
            mant = mant * 10 + d
            nd += 1
            i += 1
        if i < n and buf[i] == 46:               # '.'
            i += 1
            while i < n:
                d = np.int64(buf[i]) - 48
                if d < 0 or d > 9:
                    break
                mant = mant * 10 + d
                nd += 1
                frac += 1
                i += 1
        bad = nd == 0 or nd > 15                 # no digit, or more than float64 holds exactly
        exp = 0
        if i < n and (buf[i] == 101 or buf[i] == 69):   # 'e' 'E'
            i += 1
            eneg = i < n and buf[i] == 45
            if i < n and (buf[i] == 45 or buf[i] == 43):
                i += 1
            ne = 0
            while i < n:
                d = np.int64(buf[i]) - 48
                if d < 0 or d > 9:
                    break
                exp = exp * 10 + d
                ne += 1
                i += 1
            bad = bad or ne == 0 or ne > 3
            if eneg:
                exp = -exp
        if i >= n and not final:
            return r, line, OK                   # the number may go on in the next bytes
        if i < n:
            c = buf[i]
            if not (c == 32 or c == 9 or c == 10 or c == 13 or c == 11 or c == 12 or c == 59):
                return r, line, BAD              # a character that is not part of a number
        if bad:
            return r, line, BAD
        value = float(mant)
        p = exp - frac
        if p != 0 and mant != 0:
            if p > 22 or p < -22:
                return r, line, BAD
            value = value * pow10[p] if p > 0 else value / pow10[-p]
        if neg:
            value = -value
        if is_int[f]:
            if (p < 0 and np.floor(value) != value) or abs(value) > INT_LIMIT:
                return r, line, BAD
            if dest[f] >= 0:
                ints[dest[f], r] = np.int64(value)
        elif dest[f] >= 0:
            out[dest[f], r] = value
        f += 1
    if not final:
        return r, line, OK                       # the unfinished last line waits for more bytes
    if f == 18:
        r += 1
    elif f != 0:
        return r, line, BAD
    return r, n, OK


@njit(cache=True, nogil=True)
def count_newlines(buf) -> int:
    """Newline bytes in ``buf`` (uint8), in a loop the compiler vectorises:
    about 4x quicker than ``bytes.count`` (1 ms for 8 MB)."""
    count = 0
    for i in range(buf.shape[0]):
        count += buf[i] == 10
    return count


def job_capacity(nbytes: int) -> int:
    """Most job lines ``nbytes`` of SWF text can hold (a line has 18 numbers,
    17 separators and a newline: at least 36 bytes)."""
    return nbytes // 36 + 1


#: bytes a job line may hold in :func:`parse_integer_text`: digits, '-' and the parser's whitespace
_INTEGER_TEXT = b"0123456789- \t\r\x0b\x0c\n"


def parse_integer_text(raw: bytes, fields: int = 18) -> np.ndarray | None:
    """The job lines of SWF text whose numbers are all integers, without
    numba: a (``fields``, jobs) int64 array, or None when the text is anything
    else (the caller then runs :func:`parse_lines`).

    Accepted: lines that are blank, or comments (``;`` after optional
    whitespace), or exactly ``fields`` numbers ``-?digits`` of at most 15
    digits (no leading zero, not ``-0``) separated by the whitespace
    :func:`parse_lines` skips.  Such a number is an integer below 10**15,
    which float64 holds exactly, so the values are what :func:`parse_lines`
    reads, bit for bit, in float and in integer fields.  Anything else (a
    fraction, an exponent, a comment after the numbers, another field count)
    returns None.

    Notes
    -----
    A few passes of numpy over the bytes and one ``numpy.fromstring``: about
    25 ms for the 2.6 MB of the KTH trace, with nothing to compile, which is
    why a process that has not loaded the compiled kernels reads short traces
    this way (:func:`epochbench.instances.jobs.read_swf`).
    """
    body = _job_text(raw)
    if not body.strip() or body.translate(None, _INTEGER_TEXT) or b"-0" in body:
        return None
    text = np.frombuffer(body, dtype=np.uint8)
    digit = text >= 48                                      # only digits, '-' (45) and whitespace are left
    minus = np.flatnonzero(text == 45)
    if len(minus) and (minus[-1] + 1 >= len(text) or not digit[minus + 1].all()
                       or not (text[minus[minus > 0] - 1] <= 32).all()):
        return None                                         # a '-' not starting a number
    first = np.flatnonzero(digit[1:] > digit[:-1]) + 1      # where each number's digits start
    if digit[0]:
        first = np.concatenate(([0], first))
    zero = first[text[first] == 48]
    if len(zero) and np.append(digit, False)[zero + 1].any():
        return None                                         # a leading zero (its digits would count)
    before = np.searchsorted(first, np.flatnonzero(text == 10))      # numbers before each newline
    counts = np.diff(before, prepend=0, append=len(first))           # numbers on each line
    if not ((counts == fields) | (counts == 0)).all():
        return None
    values = np.fromstring(body, dtype=np.int64, sep=" ")
    if len(values) != len(first) or (len(values) and (values.max() >= 10**15 or values.min() <= -10**15)):
        return None                                         # more digits than float64 holds exactly
    return values.reshape(-1, fields).T


def _job_text(raw: bytes) -> bytes:
    """``raw`` without its blank and comment lines (the header's are cut off;
    the whole text is filtered only when a ``;`` comes later)."""
    pos = 0
    while pos < len(raw):
        end = raw.find(b"\n", pos)
        end = len(raw) if end < 0 else end + 1
        line = raw[pos:end].strip()
        if line and not line.startswith(b";"):
            break
        pos = end
    rest = raw[pos:]
    if b";" not in rest:
        return rest
    return b"\n".join(line for line in rest.split(b"\n") if not line.lstrip().startswith(b";"))
