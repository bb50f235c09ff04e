"""Availability profile of conservative backfilling ([rajaei-dadfar] "Conservative
Backfilling"; [vadhiyar-notes] "Conservative Backfilling"; [zhang-comparative] section 3).

The profile is a step function of the free capacity (K resources) over time,
held as sorted breakpoints ``pt[0] < pt[1] < ... < pt[m-1]`` and rows
``pf[i]`` = what is free on ``[pt[i], pt[i+1])`` (the last row runs to
infinity and is the whole machine once every reservation has ended).  Running
jobs occupy ``[start, start + estimate)`` and queued jobs their reservation
``[t, t + estimate)``.  Adjacent equal rows are merged, so ``m`` stays at most
one more than twice the number of running and queued jobs.

Two implementations of the same step function:

* :class:`Profile`, numpy-vectorised, used by the generic engine;
* the ``p_*`` kernels, compiled with numba over preallocated arrays, used by
  the fast event loop of :mod:`epochbench.sim.policies`.

Both return the same earliest start: it is a property of the step function
alone (the earliest fit is ``now`` or a time where free capacity rises), not
of how the breakpoints are stored, and the tests check that they agree.
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import intrinsic, njit


# ---- numpy version (generic engine) ------------------------------------------------
class Profile:
    """Free capacity over time from ``now`` on; every operation is O(m) numpy
    work (m breakpoints) plus an O(m log m) search in :meth:`find`."""

    def __init__(self, capacity, now: float = -np.inf):
        cap = np.asarray(capacity, dtype=np.int64)
        self.capacity = cap
        self.t = np.array([now], dtype=np.float64)
        self.free = cap.reshape(1, -1).copy()

    def __len__(self) -> int:
        return self.t.shape[0]

    def advance(self, now: float) -> None:
        """Forget everything before ``now`` (``now`` >= the first breakpoint)."""
        i = int(np.searchsorted(self.t, now, side="right")) - 1
        self.t = self.t[max(i, 0):].copy()
        self.free = self.free[max(i, 0):]
        self.t[0] = max(self.t[0], now)

    def _split(self, t: float) -> int:
        """A breakpoint at ``t`` (the row before it copied); its index.
        ``np.concatenate`` of the two halves, not ``np.insert``: the same
        arrays, at a fifth of the overhead on rows this short (``np.insert``
        was 40 % of the generic conservative engine's time)."""
        i = int(np.searchsorted(self.t, t, side="left"))
        if i < len(self.t) and self.t[i] == t:
            return i
        self.t = np.concatenate((self.t[:i], np.array([t], dtype=self.t.dtype), self.t[i:]))
        self.free = np.concatenate((self.free[:i], self.free[i - 1][None], self.free[i:]))
        return i

    def add(self, t0: float, t1: float, demand, sign: int) -> None:
        """Add ``sign * demand`` to the free capacity on ``[t0, t1)``
        (``sign = -1`` books a job, ``+1`` releases it)."""
        t0 = max(t0, float(self.t[0]))
        if not t1 > t0:
            return
        i0 = self._split(t0)
        i1 = self._split(t1)
        self.free[i0:i1] += sign * np.asarray(demand, dtype=np.int64)
        keep = np.ones(len(self.t), dtype=bool)
        keep[1:] = (self.free[1:] != self.free[:-1]).any(axis=1)
        if not keep.all():
            self.t, self.free = self.t[keep], self.free[keep]

    def find(self, demand, estimate: float) -> float:
        """Earliest breakpoint time t with ``free >= demand`` on all of
        ``[t, t + estimate)``.  O(m K + m log m)."""
        ok = (self.free >= np.asarray(demand, dtype=np.int64)).all(axis=1)
        bad = np.concatenate(([0], np.cumsum(~ok)))
        cand = np.nonzero(ok)[0]
        stop = np.searchsorted(self.t, self.t[cand] + estimate, side="left")
        good = cand[bad[stop] == bad[cand]]
        return float(self.t[good[0]])

    def at(self, t: float) -> np.ndarray:
        """Free capacity at time ``t``."""
        return self.free[max(int(np.searchsorted(self.t, t, side="right")) - 1, 0)].copy()


class CompiledProfile:
    """:class:`Profile`'s interface over the compiled kernels (``p_*`` below):
    the same step function, so the same :meth:`find` answers (the tests
    check the two against each other), at one compiled call per operation
    instead of several numpy calls with their allocations.  For policies of
    the generic engine that build whole plans at every pass (slack-based
    backfilling: about 60 profile operations per pass on KTH; the whole
    trace took 138 s with :class:`Profile`, 9 to 10 s with this, identical
    schedules); :class:`Profile` stays the independent reference of the
    generic conservative policy.  Equal neighbouring rows are merged when the
    arrays fill up, so :func:`len` counts breakpoints that :class:`Profile`
    would have merged.  Each operation is O(m K) for m rows."""

    #: profiles made in this process (a rehearsal tells whether a policy books on one)
    made = 0

    def __init__(self, capacity, now: float = -np.inf, rows: int = 64):
        CompiledProfile.made += 1
        cap = np.array(capacity, dtype=np.int64)   # a writable copy, as every array given to the kernels here
        self.capacity = cap
        self.pt = np.empty(max(int(rows), 4))
        self.pf = np.empty((self.pt.shape[0], cap.shape[0]), dtype=np.int64)
        self.m = p_init(self.pt, self.pf, cap, float(now))

    def __len__(self) -> int:
        return self.m

    @classmethod
    def rehearse_growth(cls, k: int) -> None:
        """Take a profile of ``k`` resources through a search and its arrays
        filling up (rows merged, then the arrays grown), so that a timed run
        that gets there does not load those kernels: a rehearsal stream
        (:meth:`~epochbench.sim.engine.JobTable.rehearsal`) books too few
        jobs to fill the 64 rows a profile starts with, and may not reach a
        step that books on a profile at all (slack-bf's compression).  The
        kernels see the same array types whatever the table's arrays are:
        the methods below give them writable copies."""
        prof = cls(np.ones(k, dtype=np.int64), 0.0, rows=4)
        for t in range(4):
            prof.add(float(t), float(t) + 0.5, np.ones(k, dtype=np.int64), -1)
        prof.find(np.ones(k, dtype=np.int64), 1.0)
        CompiledProfile.made -= 1          # not one of a policy's

    def _room(self, rows: int) -> None:
        """At least ``rows`` free rows: equal neighbours merged first, else the arrays doubled."""
        if self.m + rows <= self.pt.shape[0]:
            return
        self.m = _sweep(self.pt, self.pf, self.m, 0)
        if self.m + rows > self.pt.shape[0]:
            size = 2 * self.pt.shape[0] + rows
            pt, pf = np.empty(size), np.empty((size, self.pf.shape[1]), dtype=np.int64)
            pt[: self.m], pf[: self.m] = self.pt[: self.m], self.pf[: self.m]
            self.pt, self.pf = pt, pf

    def advance(self, now: float) -> None:
        """Forget everything before ``now`` (``now`` >= the first breakpoint)."""
        self.m = p_advance(self.pt, self.pf, self.m, float(now), False)

    def add(self, t0: float, t1: float, demand, sign: int) -> None:
        """Add ``sign * demand`` to the free capacity on ``[t0, t1)``."""
        self._room(2)
        dem = np.array(demand, dtype=np.int64).reshape(1, -1)
        self.m = p_add(self.pt, self.pf, self.m, float(t0), float(t1), dem, 0, int(sign))

    def find(self, demand, estimate: float) -> float:
        """Earliest breakpoint time t with ``free >= demand`` on all of ``[t, t + estimate)``."""
        dem = np.array(demand, dtype=np.int64).reshape(1, -1)
        i = p_find(self.pt, self.pf, self.m, dem, 0, float(estimate))
        if i < 0:
            raise ValueError(f"demand {dem[0].tolist()} never fits in capacity {self.capacity.tolist()}")
        return float(self.pt[i])

    def at(self, t: float) -> np.ndarray:
        """Free capacity at time ``t``."""
        i = max(int(np.searchsorted(self.pt[: self.m], t, side="right")) - 1, 0)
        return self.pf[i].copy()


# ---- compiled version (fast path) --------------------------------------------------
# State: pt (float64), pf (int64), m (rows used); the arrays are preallocated
# (:func:`rows_needed`) and changed in place, every kernel returns the new m.
# pf is rows x K, or 1-D with K = 1 (demand ``dem`` then 1-D too): the row
# helpers below branch on ``pf.ndim``, which numba resolves at compile time,
# so K = 1 runs without the inner loop over resources (measured with the
# one-pass move p_move: conservative on KTH 51 -> 44 ms).
# Unlike :class:`Profile`, equal neighbouring rows are not merged at
# once but by the sweep of :func:`p_advance` at every event time (measured:
# merging at once costs more shifting than the extra rows cost scanning).  The
# earliest fit never starts at such a redundant breakpoint (the row before it
# has the same free capacity and a window from there ends sooner), so both
# give the same answers.  The kernels are compiled without numba's reference
# counting (``_nrt=False``): they allocate nothing, and its atomic increments
# on every call cost more than the work itself (measured: 60% of the time).
JIT = dict(cache=True, _nrt=False)
# The kernels on the conservative hot path are inlined into the event loop at
# numba IR level (a call passes every array as 7 words on the stack; measured:
# conservative on KTH 40 -> 35 ms).  Rare paths (a full array) call the
# non-inlined ones; helpers that branch on ``pf.ndim`` are not inlined this
# way (the branch is resolved per compiled signature), LLVM inlines them.
INLINE = dict(JIT, inline="always")


@intrinsic
def _rows_move(typingctx, arr, dst, src, n):
    """Rows src .. src + n - 1 of a C-contiguous 1-D or 2-D array move to
    dst .. dst + n - 1 (overlapping allowed): one ``memmove``.  A numba
    loop copying row by row does not vectorise (the rows overlap); measured
    on 326 rows of times and 1-D free capacity: 375 ns against 73 ns."""
    from llvmlite import ir
    from numba.core import cgutils, types

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        per = ir.Constant(cgutils.intp_t, context.get_abi_sizeof(context.get_data_type(aryty.dtype)))
        if aryty.ndim == 2:
            per = builder.mul(per, cgutils.unpack_tuple(builder, ary.shape, 2)[1])
        data = builder.bitcast(ary.data, cgutils.voidptr_t)
        to = builder.gep(data, [builder.mul(args[1], per)])
        frm = builder.gep(data, [builder.mul(args[2], per)])
        cgutils.raw_memmove(builder, to, frm, builder.mul(args[3], per), 1)
        return context.get_dummy_value()

    if not (isinstance(arr, types.Array) and arr.layout == "C" and arr.ndim in (1, 2)):
        raise TypeError("_rows_move: a C-contiguous 1-D or 2-D array")
    return types.void(arr, types.intp, types.intp, types.intp), codegen


@intrinsic
def _pick(typingctx, cond, a, b):
    """``a if cond else b`` as a select marked unpredictable, so that LLVM
    keeps it a conditional move: unmarked, its x86 back end turns the select
    of a binary search into a branch, which the random comparisons
    mispredict half the time (measured on 300 rows: 108 cycles a search
    with the branch, 24 with the move)."""
    from numba.core import types

    def codegen(context, builder, signature, args):
        v = builder.select(args[0], args[1], args[2])
        v.set_metadata("unpredictable", builder.module.add_metadata([]))
        return v

    if a != b:
        raise TypeError("_pick: both values of one type")
    return a(types.boolean, a, a), codegen


@intrinsic
def _ge8(typingctx, arr, i, x):
    """Bit l (l < 8) set where ``arr[i + l] >= x``, for a C-contiguous 1-D
    int64 or float64 array with i + 8 <= its length: one vector load and
    compare (a mask register with AVX-512, a compare and movemask with
    AVX2), so that a scan looks at 8 rows in a few cycles instead of one
    row and a branch at a time (the caller reads the lowest or highest set
    bit)."""
    from llvmlite import ir
    from numba.core import types

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        elt = context.get_data_type(aryty.dtype)
        vty = ir.VectorType(elt, 8)
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), vty.as_pointer())
        v = builder.load(ptr, align=8)
        undef = ir.Constant(vty, ir.Undefined)
        one = builder.insert_element(undef, args[2], ir.Constant(ir.IntType(32), 0))
        splat = builder.shuffle_vector(one, undef, ir.Constant(ir.VectorType(ir.IntType(32), 8), None))  # x 8 times
        if isinstance(aryty.dtype, types.Float):
            c = builder.fcmp_ordered(">=", v, splat)
        else:
            c = builder.icmp_signed(">=", v, splat)
        return builder.zext(builder.bitcast(c, ir.IntType(8)), ir.IntType(64))

    if not (isinstance(arr, types.Array) and arr.layout == "C" and arr.ndim == 1
            and arr.dtype in (types.int64, types.float64)):
        raise TypeError(f"_ge8: a C-contiguous 1-D int64 or float64 array, not {arr}")
    return types.int64(arr, types.intp, arr.dtype), codegen


@intrinsic
def _low_bit(typingctx, x):
    """Index of the lowest set bit of an int64 x != 0 (count trailing zeros)."""
    from llvmlite import ir
    from numba.core import cgutils, types

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        cttz = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]),
                                              "llvm.cttz.i64")
        return builder.call(cttz, [args[0], ir.Constant(ir.IntType(1), 1)])

    if x != types.int64:
        raise TypeError("_low_bit: an int64")
    return types.int64(x), codegen


@intrinsic
def _high_bit(typingctx, x):
    """Index of the highest set bit of an int64 x != 0."""
    from llvmlite import ir
    from numba.core import cgutils, types

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        ctlz = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]),
                                              "llvm.ctlz.i64")
        return builder.sub(ir.Constant(i64, 63), builder.call(ctlz, [args[0], ir.Constant(ir.IntType(1), 1)]))

    if x != types.int64:
        raise TypeError("_high_bit: an int64")
    return types.int64(x), codegen


def rows_needed(jobs: int) -> int:
    """Rows for ``jobs`` jobs: the step function has at most two breakpoints
    per running or queued job and one more; :func:`p_add` sweeps out the
    redundant rows when the arrays are full."""
    return 2 * jobs + 8


@njit(**JIT)
def _covers(pf, i, dem, j):
    """Row i has room for job j (processors first: the usual reject)."""
    if pf.ndim == 1:
        return pf[i] >= dem[j]
    for r in range(pf.shape[1]):
        if dem[j, r] > pf[i, r]:
            return False
    return True


@njit(**JIT)
def _take(pf, i, dem, j, sign):
    """Row i += sign * demand of job j."""
    if pf.ndim == 1:
        pf[i] += sign * dem[j]
    else:
        for r in range(pf.shape[1]):
            pf[i, r] += sign * dem[j, r]


@njit(**JIT)
def _copy(pf, a, b):
    """Row a = row b."""
    if pf.ndim == 1:
        pf[a] = pf[b]
    else:
        for r in range(pf.shape[1]):
            pf[a, r] = pf[b, r]


@njit(**JIT)
def _same(pf, a, b):
    if pf.ndim == 1:
        return pf[a] == pf[b]
    for r in range(pf.shape[1]):
        if pf[a, r] != pf[b, r]:
            return False
    return True


@njit(**INLINE)
def _locate_from(pt, lo, m, t):
    """First row i >= lo with pt[i] >= t (binary search on [lo, m)).  The
    halving step is a conditional move (:func:`_pick`), not a branch: the
    comparisons go either way at random (measured: a tenth of conservative's
    time on the saturated 400,000-job stream of issue 18 went to this loop's
    mispredicted branches)."""
    n = m - lo
    if n <= 0:
        return lo
    while n > 1:
        half = n >> 1
        lo = _pick(pt[lo + half] < t, lo + half, lo)
        n -= half
    return lo + 1 if pt[lo] < t else lo


@njit(**JIT)
def _locate(pt, m, t):
    """First row with pt[i] >= t (binary search)."""
    return _locate_from(pt, 0, m, t)


@njit(**INLINE)
def _open(pt, pf, m, i):
    """Shift rows i.. one down; row i keeps its old values (a copy of the
    row it splits).  Returns the new m."""
    if m > i:
        _rows_move(pt, i + 1, i, m - i)
        _rows_move(pf, i + 1, i, m - i)
    return m + 1


@njit(**JIT)
def _split(pt, pf, m, t):
    """Index of a breakpoint at t > pt[0] (inserted if missing) and the new m."""
    i = _locate(pt, m, t)
    if i < m and pt[i] == t:
        return i, m
    m = _open(pt, pf, m, i - 1)
    pt[i] = t
    return i, m


@njit(**JIT)
def p_init(pt, pf, capacity, now):
    """Empty machine from ``now`` on; returns m = 1."""
    pt[0] = now
    if pf.ndim == 1:
        pf[0] = capacity[0]
    else:
        for r in range(pf.shape[1]):
            pf[0, r] = capacity[r]
    return 1


@njit(**INLINE)
def _sweep(pt, pf, m, i):
    """Move rows i.. to the front, dropping rows equal to the one before."""
    w = 0
    for a in range(i, m):
        if w > 0 and _same(pf, a, w - 1):
            continue
        if w != a:
            pt[w] = pt[a]
            _copy(pf, w, a)
        w += 1
    return w


@njit(**INLINE)
def p_advance(pt, pf, m, now, dirty):
    """Forget everything before ``now``; with ``dirty`` (the profile changed
    since the last call) also merge equal neighbours.  O(m K)."""
    i = 0
    while i + 1 < m and pt[i + 1] <= now:
        i += 1
    if i > 0 or dirty:
        m = _sweep(pt, pf, m, i)
    if pt[0] < now:
        pt[0] = now
    return m


@njit(**JIT)
def p_add(pt, pf, m, t0, t1, dem, j, sign):
    """Add ``sign * dem[j]`` to the free capacity on ``[t0, t1)``; O(m K)."""
    if t0 < pt[0]:
        t0 = pt[0]
    if not t1 > t0:
        return m
    if m + 2 > pt.shape[0]:
        m = _sweep(pt, pf, m, 0)
    i0, m = _split(pt, pf, m, t0)
    i1, m = _split(pt, pf, m, t1)
    for i in range(i0, i1):
        _take(pf, i, dem, j, sign)
    return m


@njit(**JIT)
def _room_from(pt, pf, i, m, d, hi):
    """First row >= i with free capacity >= d or time >= hi (1-D pf), m if
    none: 8 rows a step (:func:`_ge8`); rows past m in the last step are
    ignored."""
    n = pf.shape[0] - 8
    while i <= n:
        if i >= m:
            return m
        mk = _ge8(pf, i, d) | _ge8(pt, i, hi)
        if mk != 0:
            return min(i + _low_bit(mk), m)
        i += 8
    while i < m and pf[i] < d and pt[i] < hi:
        i += 1
    return min(i, m)


@njit(**JIT)
def _run_end(pt, pf, k, m, d, end):
    """First row >= k with free capacity < d or time >= end (1-D pf), m if
    none: 8 rows a step (:func:`_ge8`)."""
    n = pf.shape[0] - 8
    while k <= n:
        if k >= m:
            return m
        mk = (_ge8(pf, k, d) ^ 0xFF) | _ge8(pt, k, end)
        if mk != 0:
            return min(k + _low_bit(mk), m)
        k += 8
    while k < m and pf[k] >= d and pt[k] < end:
        k += 1
    return min(k, m)


@njit(**JIT)
def _below_from(pf, k, n, d):
    """First row in [k, n) with free capacity < d (1-D pf), n if none
    (n <= the rows in use): 8 rows a step (:func:`_ge8`)."""
    last = pf.shape[0] - 8
    while k <= last:
        if k >= n:
            return n
        mk = _ge8(pf, k, d) ^ 0xFF
        if mk != 0:
            return min(k + _low_bit(mk), n)
        k += 8
    while k < n and pf[k] >= d:
        k += 1
    return min(k, n)


@njit(**JIT)
def _below_back(pf, lo, k, d):
    """Last row in [lo, k) with free capacity < d (1-D pf), lo - 1 if none:
    8 rows a step back (:func:`_ge8`)."""
    while k - 8 >= lo:
        mk = _ge8(pf, k - 8, d) ^ 0xFF
        if mk != 0:
            return k - 8 + _high_bit(mk)
        k -= 8
    while k > lo and pf[k - 1] >= d:
        k -= 1
    return k - 1


@njit(**INLINE)
def _earliest(pt, pf, m, dem, j, e, hi, limit, i):
    """Row of the earliest breakpoint t < hi, from row i on, with free >=
    dem[j] on [t, min(t + e, limit)), else -1.  One sweep: a window that
    fails at row k cannot start anywhere up to k, so the next candidate is
    k + 1.  O(m K).  With one resource, the rows are read 8 at a time
    (:func:`_room_from`, :func:`_run_end`): only the start of a run of rows
    with room can begin the earliest fit (a later start in the run ends
    later), so the search jumps from run to run."""
    while True:
        i = _room(pt, pf, i, m, dem, j, hi)
        if i >= m or not pt[i] < hi:
            return -1
        end = min(pt[i] + e, limit)
        k = _room_until(pt, pf, i + 1, m, dem, j, end)
        if k == m or not pt[k] < end:
            return i
        i = k + 1


@njit(**JIT)
def _room(pt, pf, i, m, dem, j, hi):
    """First row >= i with room for job j or at time >= hi, m if none (the branch on
    ``pf.ndim`` is resolved here, in a function that gets pf as an
    argument; not in the inlined :func:`_earliest`)."""
    if pf.ndim == 1:
        return _room_from(pt, pf, i, m, dem[j], hi)
    while i < m and pt[i] < hi and not _covers(pf, i, dem, j):
        i += 1
    return i


@njit(**JIT)
def _room_until(pt, pf, k, m, dem, j, end):
    """First row >= k without room for job j or at time >= end, m if none."""
    if pf.ndim == 1:
        return _run_end(pt, pf, k, m, dem[j], end)
    while k < m and pt[k] < end and _covers(pf, k, dem, j):
        k += 1
    return k


@njit(**INLINE)
def p_find(pt, pf, m, dem, j, e):
    """Row of the earliest breakpoint t with free >= dem[j] on all of [t, t + e)."""
    return _earliest(pt, pf, m, dem, j, e, np.inf, np.inf, 0)


@njit(**INLINE)
def p_find_before(pt, pf, m, dem, j, e, r, hi):
    """Row of the earliest breakpoint t < hi (hi <= r) where job j, booked on
    [r, r + e), would fit once taken out of the profile; -1 if none.  The
    rows from r on hold the job itself, so only [t, min(t + e, r)) needs
    checking: the same answer as taking it out and calling :func:`p_find`
    (when no fit starts in [hi, r)), without touching the arrays.
    O(rows before hi)."""
    return _earliest(pt, pf, m, dem, j, e, hi, r, 0)


@njit(**INLINE)
def p_find_between(pt, pf, m, dem, j, e, r, i, hi):
    """:func:`p_find_before` from row i on: the same row when no fit starts
    before ``pt[i]`` (a start inside a run of rows with room is then no fit
    either: the run's own start would end no later).  O(rows from i to hi)."""
    return _earliest(pt, pf, m, dem, j, e, hi, r, i)


@njit(**INLINE)
def p_book(pt, pf, m, i, e, dem, j):
    """Book job j on [pt[i], pt[i] + e), row i as found by :func:`p_find`;
    O(m K) without a search.  A window lost in its start's time (pt[i] + e
    == pt[i]) books nothing, as in :meth:`Profile.add`: a row of no width
    holding the job would stay apart from its equal neighbours (the sweep
    cannot merge it) and fill the arrays."""
    t1 = pt[i] + e
    if not t1 > pt[i]:
        return m
    if m + 1 > pt.shape[0]:
        return p_add(pt, pf, m, pt[i], t1, dem, j, -1)
    k = i + 1
    while k < m and pt[k] < t1:
        k += 1
    if not (k < m and pt[k] == t1):
        m = _open(pt, pf, m, k - 1)
        pt[k] = t1
    for a in range(i, k):
        _take(pf, a, dem, j, -1)
    return m


@njit(**INLINE)
def _shift(pt, pf, a, b, d):
    """Rows a..b-1 move d rows down (from the last)."""
    if d == 0 or b <= a:
        return
    _rows_move(pt, a + d, a, b - a)
    _rows_move(pf, a + d, a, b - a)


@njit(**INLINE)
def _find_from(pt, m, a, t):
    """First row >= a with pt >= t, and whether it is a breakpoint at t."""
    while a < m and pt[a] < t:
        a += 1
    return a, a < m and pt[a] == t


@njit(**INLINE)
def p_move(pt, pf, m, i, r, e, dem, j):
    """:func:`p_move_at` without the row of r known; returns the new m."""
    return p_move_at(pt, pf, m, i, r, e, dem, j, -1)[0]


@njit(**INLINE)
def p_move_at(pt, pf, m, i, r, e, dem, j, ir):
    """Move job j from [r, r + e) to [pt[i], pt[i] + e), any row i with
    pt[i] < r where j fits (as :func:`p_find_before` finds it): the rows of
    :func:`p_book` then :func:`p_add` with ``sign = +1``.  With t1 = pt[i]
    + e, lo = min(t1, r) and hi = max(t1, r), the missing breakpoints (lo,
    hi, r + e) are inserted in one backward pass of block moves, and only
    the rows whose capacity changes are touched: [pt[i], lo) loses the job
    and [hi, r + e) gets it back; the rows between keep it either way.
    Finding lo and r + e walks rows (both are a row or two past where the
    walk starts), hi is bisected (the job's own window lies between).
    Measured on a saturated 100,000-job stream (4,096 nodes): 1,210 cycles
    a move when every row of [pt[i], r + e) was visited and shifted row by
    row, 300 now.  ``ir``: the first row at or after r (:func:`_locate`),
    when the caller has it, else -1: hi is then not bisected when it is r,
    and bisected from there when it is later.  Returns the new m and the
    row that starts at hi = max(pt[i] + e, r), where the rows that got the
    job back begin (-1 on the rare path through :func:`p_add`).
    O(log m + rows changed) plus the block moves."""
    t1, r1 = pt[i] + e, r + e
    if m + 3 > pt.shape[0] or not (t1 > pt[i] and r1 > r):  # rare: p_add sweeps first; a window lost
        # in its start's time (t + e == t) is no interval, which p_add leaves alone (as Profile.add)
        m = p_add(pt, pf, m, pt[i], t1, dem, j, -1)
        return p_add(pt, pf, m, r, r1, dem, j, 1), -1
    lo, hi = min(t1, r), max(t1, r)  # t1 == r: one breakpoint
    a_lo, has_lo = _find_from(pt, m, i + 1, lo)
    if ir < 0:
        a_hi = _locate_from(pt, a_lo, m, hi)
    elif hi == r:
        a_hi = ir
    else:
        a_hi = _locate_from(pt, ir, m, hi)
    has_hi = a_hi < m and pt[a_hi] == hi
    a_r1, has_r1 = _find_from(pt, m, a_hi, r1)
    d1 = int(not has_lo)
    d2 = d1 + int(lo != hi and not has_hi)
    d3 = d2 + int(not has_r1)
    # from the top: each block of rows moves down by the breakpoints missing below it,
    # and a missing breakpoint takes a copy of the row it splits (not yet moved)
    _shift(pt, pf, a_r1, m, d3)
    if d3 > d2:
        pt[a_r1 + d2] = r1
        _copy(pf, a_r1 + d2, a_r1 - 1)
    _shift(pt, pf, a_hi, a_r1, d2)
    if d2 > d1:
        pt[a_hi + d1] = hi
        _copy(pf, a_hi + d1, a_hi - 1)
    _shift(pt, pf, a_lo, a_hi, d1)
    if d1 > 0:
        pt[a_lo] = lo
        _copy(pf, a_lo, a_lo - 1)
    m += d3
    for a in range(i, a_lo):  # [pt[i], lo)
        _take(pf, a, dem, j, -1)
    for a in range(a_lo if lo == hi else a_hi + d1, a_r1 + d2):  # [hi, r + e)
        _take(pf, a, dem, j, 1)
    return m, a_lo if lo == hi else a_hi + d1


@njit(**INLINE)
def p_release(pt, pf, m, t1, dem, j):
    """Give job j's capacity back on [pt[0], t1), t1 > pt[0] (a job that
    ended early at pt[0]): :func:`p_add` with ``sign = +1`` without its
    bisections.  O(m K)."""
    k = 1
    while k < m and pt[k] < t1:
        k += 1
    if not (k < m and pt[k] == t1):
        if m + 1 > pt.shape[0]:  # rare: p_add sweeps first
            return p_add(pt, pf, m, pt[0], t1, dem, j, 1)
        m = _open(pt, pf, m, k - 1)
        pt[k] = t1
    for a in range(k):
        _take(pf, a, dem, j, 1)
    return m


@njit(**JIT)
def rebuild(now, order, running, run_end, dem, est, capacity, pt, pf, res):
    """Book ``order`` (job rows, priority order) one by one at its earliest
    fit in the profile of the ``running`` jobs (each busy until
    ``run_end``; none if that is now); ``res[j]`` = the slot found.
    O(q m K) for q queued jobs and m breakpoints."""
    m = p_init(pt, pf, capacity, now)
    for a in range(running.shape[0]):
        m = p_add(pt, pf, m, now, run_end[a], dem, running[a], -1)
    return _book_order(order, 0, dem, est, pt, pf, m, res)[0]


@njit(**INLINE)
def _book_order(order, first, dem, est, pt, pf, m, res):
    """Book ``order[first:]`` one by one, each job at its earliest fit
    (``res[j]``); returns the profile's rows and whether a slot had no
    width (``t + estimate == t`` in floating point: an estimate below half
    a step of the times, as 1e-300 s, or 6e-8 s at Unix-epoch times).  Such
    a booking leaves a second row at its time that still shows the job's
    resources free, which later jobs of the same plan can take."""
    flat = False
    for b in range(first, order.shape[0]):
        j = order[b]
        i = p_find(pt, pf, m, dem, j, est[j])
        res[j] = pt[i]
        flat = flat or pt[i] + est[j] == pt[i]
        m = p_book(pt, pf, m, i, est[j], dem, j)
    return m, flat
