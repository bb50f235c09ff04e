"""The Ousterhout matrix of gang scheduling and the steps that recompute it
([zhang-comparative] sections 5, 6.1 and 6.4; [vadhiyar-notes] "Gang Scheduling Steps").

The matrix has ``mpl`` rows (time slices, one virtual machine each) and ``n``
columns (processors).  A job occupies the same set of columns in every row it
appears in; one of those rows is its *home row*, the others are replicas
([zhang-comparative] section 5.1, conditions 3-4).  Rows and columns are held as Python
integers used as bit sets: a row's occupied columns, a job's columns and a
job's rows.  Testing whether a job can go into a row in its own columns is one
``&`` on two integers, whatever ``n``.

:class:`Clock` is the clock algorithm of [zhang-comparative] figure 10: the rows are
positions on a clock that turns once per scheduling cycle, each job has a
*deadline* position by which it must run again (one turn after it last ran,
or the position of its home row when it has not run yet), and a job may only
be moved to a row that comes up no later than its deadline.  Every job thus
runs in at least one slice of every scheduling cycle.

The steps are plain functions on a :class:`Matrix` and a :class:`Clock`:

==========================  =====================================================
:func:`clean_matrix`        CleanMatrix (6.1): drop every instance outside the home row
:func:`compact_matrix`      CompactMatrix (6.1, [vadhiyar-notes]'s do-while): move jobs from
                            less to more populated rows, same columns, clock rule
:func:`schedule_gs`         Schedule (6.1): FCFS, best-fit row, stop at the first job
                            that does not fit
:func:`fill_matrix`         FillMatrix (6.1): replicate jobs in starting-time order
:func:`collapse_migrating`  CollapseMatrix-2 (6.4): compaction with migration,
                            options 1 and 2, cheaper of eqs. (4) and (5)
:func:`fill_migrating`      FillMatrix-2 (6.4): replicate after migrating the
                            blocking jobs (option 1)
==========================  =====================================================
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Protocol

import numpy as np

from epochbench.instances.core import InstanceError

EMPTY = -1


def lowest_bits(mask: int, k: int) -> int:
    """The ``k`` lowest set bits of ``mask`` (a bit set of columns); binary
    search on the bit count of prefixes, O(log n) integer operations."""
    if k <= 0:
        return 0
    if mask.bit_count() < k:
        raise ValueError(f"mask has {mask.bit_count()} bits set, {k} wanted")
    lo, hi = k, mask.bit_length()
    while lo < hi:
        mid = (lo + hi) // 2
        if (mask & ((1 << mid) - 1)).bit_count() >= k:
            hi = mid
        else:
            lo = mid + 1
    return mask & ((1 << lo) - 1)


def bits(mask: int) -> list[int]:
    """Positions of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(columns: Iterable[int]) -> int:
    out = 0
    for c in columns:
        out |= 1 << int(c)
    return out


class Matrix:
    """Ousterhout matrix, ``mpl`` rows x ``n`` columns ([zhang-comparative] figure 9).

    Per row: ``occ[r]`` (bit set of occupied columns), ``used[r]`` (their
    number) and ``row[r]`` (the jobs in the row, insertion order).  Per job:
    ``cols`` (bit set of its columns), ``size`` (processors), ``rows`` (bit
    set of its rows), ``home`` (its home row).  ``order`` holds the jobs in
    the order they entered the matrix (starting-time order of FillMatrix).
    Every change keeps the two views consistent; :meth:`grid` rebuilds the
    dense matrix from the job records and checks it against the rows.
    """

    def __init__(self, n: int, mpl: int):
        if n < 1 or mpl < 1:
            raise InstanceError(f"matrix needs n >= 1 processors and mpl >= 1 rows, got n={n}, mpl={mpl}")
        self.n, self.mpl = int(n), int(mpl)
        self.full = (1 << self.n) - 1
        self.occ = [0] * self.mpl
        self.used = [0] * self.mpl
        self.row: list[dict[int, None]] = [{} for _ in range(self.mpl)]
        self.cols: dict[int, int] = {}
        self.size: dict[int, int] = {}
        self.rows: dict[int, int] = {}
        self.home: dict[int, int] = {}
        self.order: dict[int, None] = {}

    # ---- queries ---------------------------------------------------------------------
    def __contains__(self, job) -> bool:
        return job in self.home

    def __len__(self) -> int:
        return len(self.home)

    def free(self, r: int) -> int:
        """Empty cells of row ``r``."""
        return self.n - self.used[r]

    def in_row(self, job: int, r: int) -> bool:
        return bool((self.rows[job] >> r) & 1)

    def single(self, job: int) -> bool:
        """The job appears in its home row only."""
        return self.rows[job] == 1 << self.home[job]

    def fits_columns(self, job: int, r: int) -> bool:
        """Job ``job`` could go into row ``r`` in its own columns (it is not
        there yet and those cells are empty)."""
        return not (self.rows[job] >> r) & 1 and not self.occ[r] & self.cols[job]

    def blockers(self, job: int, r: int) -> list[int]:
        """Jobs of row ``r`` that hold some of ``job``'s columns (S(A) of seed
        004 section 6.4), in row order."""
        c = self.cols[job]
        return [x for x in self.row[r] if x != job and self.cols[x] & c]

    def home_jobs(self, r: int) -> list[int]:
        return [x for x in self.row[r] if self.home[x] == r]

    def nonempty(self) -> list[int]:
        return [r for r in range(self.mpl) if self.used[r]]

    # ---- changes ---------------------------------------------------------------------
    def _put(self, job: int, r: int) -> None:
        c = self.cols[job]
        if self.occ[r] & c:
            raise RuntimeError(f"row {r}: columns of job {job} are not empty")
        if (self.rows[job] >> r) & 1:
            raise RuntimeError(f"job {job} is already in row {r}")
        self.occ[r] |= c
        self.used[r] += self.size[job]
        self.row[r][job] = None
        self.rows[job] |= 1 << r

    def _take(self, job: int, r: int) -> None:
        self.occ[r] &= ~self.cols[job]
        self.used[r] -= self.size[job]
        del self.row[r][job]
        self.rows[job] &= ~(1 << r)

    def place(self, job: int, size: int, r: int, cols: int | None = None) -> int:
        """A new job enters row ``r`` (its home) on ``cols`` (default: the
        lowest empty columns of the row); returns the columns."""
        if job in self.home:
            raise RuntimeError(f"job {job} is already in the matrix")
        size = int(size)
        if size > self.free(r):
            raise RuntimeError(f"row {r} has {self.free(r)} empty cells, job {job} needs {size}")
        if cols is None:
            cols = lowest_bits(self.full & ~self.occ[r], size)
        elif cols.bit_count() != size:
            raise RuntimeError(f"job {job}: {cols.bit_count()} columns for {size} processors")
        self.cols[job], self.size[job], self.rows[job], self.home[job] = cols, size, 0, r
        self.order[job] = None
        self._put(job, r)
        return cols

    def replicate(self, job: int, r: int) -> None:
        """Add ``job`` to row ``r`` in its own columns (FillMatrix)."""
        self._put(job, r)

    def drop(self, job: int, r: int) -> None:
        """Remove a replica (not the home row) of ``job`` from row ``r``."""
        if self.home[job] == r:
            raise RuntimeError(f"row {r} is the home row of job {job}")
        self._take(job, r)

    def move(self, job: int, dst: int, cols: int | None = None) -> None:
        """Move a job that appears in its home row only to row ``dst``, which
        becomes its home; ``cols`` gives new columns (migration)."""
        if not self.single(job):
            raise RuntimeError(f"job {job} has replicas; clean the matrix before moving it")
        self._take(job, self.home[job])
        if cols is not None:
            if cols.bit_count() != self.size[job]:
                raise RuntimeError(f"job {job}: {cols.bit_count()} columns for {self.size[job]} processors")
            self.cols[job] = cols
        self.home[job] = dst
        self._put(job, dst)

    def recolumn(self, job: int, cols: int) -> None:
        """Give a job that appears in one row only new columns in that row
        (migration of its tasks to other processors)."""
        if not self.single(job):
            raise RuntimeError(f"job {job} appears in several rows; its columns cannot change")
        r = self.home[job]
        self._take(job, r)
        self.cols[job] = cols
        self._put(job, r)

    def remove(self, job: int) -> None:
        """The job leaves the matrix (it ended, or it is preempted)."""
        for r in bits(self.rows[job]):
            self._take(job, r)
        for d in (self.cols, self.size, self.rows, self.home, self.order):
            del d[job]

    # ---- dense view --------------------------------------------------------------------
    def grid(self) -> np.ndarray:
        """The dense matrix (``mpl`` x ``n``, job number or -1), painted from
        the job records; raises ``AssertionError`` if two jobs share a cell,
        a job's columns differ between rows, or the row records disagree."""
        g = np.full((self.mpl, self.n), EMPTY, dtype=np.int64)
        for job in self.home:
            cols = bits(self.cols[job])
            assert len(cols) == self.size[job], f"job {job}: {len(cols)} columns for size {self.size[job]}"
            assert (self.rows[job] >> self.home[job]) & 1, f"job {job} is not in its home row"
            for r in bits(self.rows[job]):
                assert (g[r, cols] == EMPTY).all(), f"row {r}: job {job} overlaps another job"
                g[r, cols] = job
        for r in range(self.mpl):
            assert self.occ[r] == mask_of(np.nonzero(g[r] != EMPTY)[0]), f"row {r}: occupancy record is stale"
            assert self.used[r] == int((g[r] != EMPTY).sum()), f"row {r}: count record is stale"
            assert set(self.row[r]) == set(np.unique(g[r][g[r] != EMPTY]).tolist()), f"row {r}: job list is stale"
        return g

    @classmethod
    def from_grid(cls, grid, homes: dict | None = None) -> "Matrix":
        """A matrix from a dense grid (-1 = empty).  A job's columns are
        those it holds in its first row; ``homes`` maps job to home row
        (default: its first row).  Raises ``InstanceError`` if a job holds
        different columns in different rows."""
        g = np.asarray(grid, dtype=np.int64)
        m = cls(g.shape[1], g.shape[0])
        homes = dict(homes or {})
        seen: dict[int, int] = {}
        for r in range(g.shape[0]):
            for job in dict.fromkeys(g[r][g[r] != EMPTY].tolist()):
                cols = mask_of(np.nonzero(g[r] == job)[0])
                if job in seen and seen[job] != cols:
                    raise InstanceError(f"grid: job {job} holds different columns in different rows")
                seen.setdefault(job, cols)
        for job, cols in seen.items():
            rows = [r for r in range(g.shape[0]) if (g[r] == job).any()]
            h = homes.get(job, rows[0])
            if h not in rows:
                raise InstanceError(f"grid: home row {h} of job {job} does not hold it")
            m.place(job, cols.bit_count(), h, cols)
            for r in rows:
                if r != h:
                    m.replicate(job, r)
        return m


class Clock:
    """The clock algorithm ([zhang-comparative] section 6.1, figure 10).

    ``row`` is the row whose slice is running (or starts now), ``pos`` its
    absolute position (it grows by the number of rows the clock passes, so
    ``pos // mpl`` counts scheduling cycles).  ``deadline[job]`` is the last
    position at which the job may run next: ``pos + mpl`` for a job running
    in the current slice, one turn after its last run otherwise, and the
    position of its home row for a job that has not run yet.  A job may be
    moved to row ``r`` only if ``r`` comes up no later than that
    (:meth:`allowed`): it can only be moved *ahead*, never behind its last run.
    """

    def __init__(self, mpl: int, row: int = 0, pos: int = 0):
        self.mpl, self.row, self.pos = int(mpl), int(row), int(pos)
        self.deadline: dict[int, int] = {}

    def dist(self, r: int) -> int:
        """Slices from now until row ``r`` runs (0 = the current row)."""
        return (r - self.row) % self.mpl

    def order(self) -> list[int]:
        """The rows in the order they come up, current row first."""
        return [*range(self.row, self.mpl), *range(self.row)]

    def at(self, r: int) -> int:
        """Absolute position at which row ``r`` next runs."""
        return self.pos + self.dist(r)

    def allowed(self, job: int, r: int) -> bool:
        return self.at(r) <= self.deadline[job]

    def placed(self, job: int, r: int) -> None:
        self.deadline[job] = self.at(r)

    def ran(self, job: int) -> None:
        self.deadline[job] = self.pos + self.mpl

    def forget(self, job: int) -> None:
        self.deadline.pop(job, None)

    def step(self, rows: int = 1) -> None:
        self.row = (self.row + rows) % self.mpl
        self.pos += rows


class Guard(Protocol):
    """What backfilling gang scheduling adds to a move between rows
    ([zhang-comparative] section 6.2): the destination row's reservations must hold."""

    def allows(self, job: int, dst: int) -> bool: ...

    def moved(self, job: int, src: int, dst: int) -> None: ...


# ---- the four steps of section 5.2 / 6.1 ----------------------------------------------
def clean_matrix(m: Matrix) -> int:
    """CleanMatrix ([zhang-comparative] section 6.1): remove every instance of a job
    that is not in its home row; returns the number removed.  O(jobs x mpl)."""
    removed = 0
    for r in range(m.mpl):
        for job in [x for x in m.row[r] if m.home[x] != r]:
            m.drop(job, r)
            removed += 1
    return removed


def _rows_ascending(m: Matrix) -> list[int]:
    return sorted(range(m.mpl), key=lambda r: (m.used[r], r))


def _row_pairs(m: Matrix):
    """One round of the (source i, destination j) row pairs of CompactMatrix
    and CollapseMatrix-2, as the printed loop of [zhang-comparative] section
    6.1 runs them: i from least to most populated, j among the other rows
    from most to least populated, skipping pairs where j is less populated
    than i or cannot hold i's smallest job.  Between two rows equally full
    jobs may go either way (j was only a row after i: where the clock rule
    kept a job of the earlier row from moving, a job of the later one that
    could move never did); after a move the rows are no longer equal, so
    none goes back.  Lazy, so the moves made for one pair count for the
    next."""
    asc = _rows_ascending(m)
    for i in asc:
        if not m.used[i]:
            continue
        smallest = min(m.size[x] for x in m.row[i])
        for j in sorted((r for r in asc if r != i), key=lambda r: (-m.used[r], r)):
            if m.used[j] < m.used[i] or m.free(j) < smallest:
                continue
            yield i, j


def _may_move(m: Matrix, clock: Clock, guard: Guard | None, job: int, i: int, j: int) -> bool:
    """Row j (still) at least as populated as row i, room for ``job``, and
    the clock rule and the reservations (``guard``) allow it there."""
    if m.used[j] < m.used[i] or m.free(j) < m.size[job]:
        return False
    return clock.allowed(job, j) and (guard is None or guard.allows(job, j))


def compact_matrix(m: Matrix, clock: Clock, guard: Guard | None = None) -> int:
    """CompactMatrix ([zhang-comparative] section 6.1; the do-while of [vadhiyar-notes]).

    ``for i = least to most populated row: for j = most to least populated
    row (after i): for all jobs in row i: move the job to row j if it can``,
    repeated while the matrix changes.  A job can move if it appears in row
    i only, its columns are empty in row j, row j is at least as populated as
    row i (jobs go from less to more populated rows, so every move raises
    sum(used^2) and the loop ends), the clock rule allows it and, for BGS,
    ``guard`` (the destination row's reservations) allows it.  The loop is
    [zhang-comparative]'s; [vadhiyar-notes]' copy of it adds "then move and
    break", which moves at most one job of row i into row j per pair (the
    do-while moves the others in later rounds): on 3,000 random matrices the
    two differ in 7, and only in which row some jobs call home, never in the
    rows' occupancy.  The jobs of row i are taken in the row's order: the GS loop names none, and the
    smallest-first order of section 6.4 is read as CollapseMatrix-2's (the
    migration paragraph it stands in; :func:`collapse_migrating`), though
    the paper also calls CollapseMatrix-2 "the same as CollapseMatrix-1";
    this step is CollapseMatrix-1 of MGS and MBGS too.  Returns the number
    of moves.  O(mpl^2 x jobs) per round."""
    moves = 0
    while True:
        changed = False
        for i, j in _row_pairs(m):
            for job in list(m.row[i]):
                if m.home[job] != i or not m.single(job) or m.occ[j] & m.cols[job]:
                    continue
                if not _may_move(m, clock, guard, job, i, j):
                    continue
                m.move(job, j)
                if guard is not None:
                    guard.moved(job, i, j)
                moves += 1
                changed = True
        if not changed:
            return moves


def schedule_gs(m: Matrix, clock: Clock, queue, procs) -> list[int]:
    """Schedule of plain gang scheduling ([zhang-comparative] section 6.1): take the
    waiting jobs in FCFS order (``queue``, a deque, is consumed from the
    left); put each in the row with the fewest empty cells that can hold it
    (best fit; ties: the row that runs soonest), on that row's lowest empty
    columns; stop at the first job that does not fit.  Returns the jobs
    placed.  O(placed x mpl)."""
    placed = []
    while queue:
        job = queue[0]
        p = int(procs[job])
        best, key = -1, m.n + 1
        for r in clock.order():
            f = m.free(r)
            if p <= f < key:
                best, key = r, f
        if best < 0:
            break
        queue.popleft()
        m.place(job, p, best)
        clock.placed(job, best)
        placed.append(job)
    return placed


def fill_matrix(m: Matrix, clock: Clock, order: Iterable[int] | None = None) -> int:
    """FillMatrix ([zhang-comparative] section 6.1): ``do { for each job in starting
    time order: for all rows (clock order): if the job can be replicated in
    the same columns, do it and break } while the matrix changes``.  Each
    round replicates a job at most once.  Rows only lose empty cells during
    the step, so a job that found no row in one round finds none later: each
    round after the first retries only the jobs replicated in the round
    before (same result, less work).  Returns the replicas added.  This is
    FillMatrix-1 of MGS and MBGS too, in starting time order; section 6.4's
    "first-come first-serve order" belongs to the expansion with migration,
    FillMatrix-2 (:func:`fill_migrating`).
    O(jobs x mpl) for the first round, O(replicas x mpl) for the others."""
    jobs = [j for j in (m.order if order is None else order) if j in m.home]
    added = 0
    n, occ, used, rows_of, cols_of, size = m.n, m.occ, m.used, m.rows, m.cols, m.size
    while jobs:
        rows = [r for r in clock.order() if used[r] < n]
        if not rows:
            break
        room = n - min(used[r] for r in rows)
        again = []
        for job in jobs:
            s = size[job]
            if s > room:
                continue
            c, jr = cols_of[job], rows_of[job]
            for r in rows:
                if used[r] + s <= n and not (jr >> r) & 1 and not occ[r] & c:
                    m.replicate(job, r)
                    added += 1
                    again.append(job)
                    break
        jobs = again
    return added


# ---- migration (section 6.4) -----------------------------------------------------------
@dataclass
class Budget:
    """Migration allowance: ``left`` tasks may still migrate in the current
    time slice (the limit Q of [zhang-comparative] section 6.4); ``moved`` are the jobs
    migrated in the current scheduling pass (each at most once, so that no
    job ping-pongs within one matrix)."""

    left: float = float("inf")
    moved: set = field(default_factory=set)


@dataclass(frozen=True)
class Migration:
    """One migration: ``job`` (A) goes from row ``src`` to row ``dst``
    (CollapseMatrix-2) or is replicated into ``dst`` (FillMatrix-2, src =
    -1).  ``option`` 1 moves the ``blocked`` jobs S(A) of row ``dst`` to other
    columns, option 2 moves A to the empty columns of ``dst``.  ``tasks`` is
    what counts against Q; ``penalty`` maps each job to the seconds of
    execution it loses; ``overhead`` is eq. (4) or (5) in node-seconds."""

    job: int
    src: int
    dst: int
    option: int
    blocked: tuple
    tasks: int
    penalty: dict
    overhead: float


def migration_overhead(option: int, size_a: int, sizes_blocked, cost: float) -> float:
    """Node-seconds lost by migrating job A with blocking jobs S(A), [zhang-comparative]
    section 6.4: option 1, eq. (4): C/2 |A| + C sum|J|; option 2, eq. (5):
    C |A| + C/2 sum|J| (C: checkpoint plus restart, each C/2)."""
    s = float(sum(sizes_blocked))
    if option == 1:
        return cost / 2 * size_a + cost * s
    if option == 2:
        return cost * size_a + cost / 2 * s
    raise ValueError(f"migration option must be 1 or 2, got {option}")


def _penalty(option: int, job: int, blocked, cost: float) -> dict:
    a, s = (cost / 2, cost) if option == 1 else (cost, cost / 2)
    out = {j: s for j in blocked}
    out[job] = out.get(job, 0.0) + a
    return out


def _clear_blockers(m: Matrix, job: int, r: int, blocked: list[int]) -> None:
    """Option 1: move the jobs ``blocked`` of row ``r`` to the row's empty
    columns outside ``job``'s columns (lowest first)."""
    for x in blocked:
        m._take(x, r)
    room = m.full & ~m.occ[r] & ~m.cols[job]
    for x in blocked:
        cols = lowest_bits(room, m.size[x])
        room &= ~cols
        m.cols[x] = cols
        m._put(x, r)


def collapse_migrating(m: Matrix, clock: Clock, budget: Budget, cost: float,
                       guard: Guard | None = None) -> list[Migration]:
    """CollapseMatrix-2 ([zhang-comparative] section 6.4): the loop of
    :func:`compact_matrix` (rows from least to most populated, jobs of a row
    from smallest to largest) where a job may also go to other columns of
    the destination row: the row must have ``size`` empty cells, the clock
    rule (and, for MBGS, the reservations) must allow it, and the tasks
    migrated must fit in ``budget.left``.  If its own columns are empty it
    moves without migration; otherwise the cheaper of option 1 (migrate the
    blocking jobs S(A) within the row, eq. 4; they must appear in that row
    only) and option 2 (migrate A to the row's empty columns, eq. 5), ties
    to option 1.  Both equations scale with the cost C, so they are compared
    per unit of C: option 1 when sum |S(A)| <= |A|, at every C (at C = 0
    both were 0 and the tie took option 1 always: 32 tasks moved to place a
    1-task job).  Returns the migrations.  O(rounds x mpl^2 x jobs)."""
    done: list[Migration] = []
    while True:
        changed = False
        for i, j in _row_pairs(m):
            jobs = sorted((x for x in m.row[i] if m.home[x] == i and m.single(x)),
                          key=lambda x: (m.size[x], x))
            for job in jobs:
                if not _may_move(m, clock, guard, job, i, j):
                    continue
                if not m.occ[j] & m.cols[job]:
                    m.move(job, j)
                else:
                    mig = _collapse_one(m, job, i, j, budget, cost)
                    if mig is None:
                        continue
                    done.append(mig)
                if guard is not None:
                    guard.moved(job, i, j)
                changed = True
        if not changed:
            return done


def _collapse_one(m: Matrix, job: int, i: int, j: int, budget: Budget, cost: float):
    s = m.size[job]
    blocked = m.blockers(job, j)
    sizes = [m.size[x] for x in blocked]
    opts = []   # ranked per unit of C: eqs. (4) and (5) both scale with C, so the choice does not depend on it
    if (sum(sizes) <= budget.left and all(m.single(x) and x not in budget.moved for x in blocked)):
        opts.append((migration_overhead(1, s, sizes, 1.0), 1))
    if s <= budget.left and job not in budget.moved:
        opts.append((migration_overhead(2, s, sizes, 1.0), 2))
    if not opts:
        return None
    option = min(opts)[1]
    over = migration_overhead(option, s, sizes, cost)
    if option == 1:
        _clear_blockers(m, job, j, blocked)
        m.move(job, j)
        tasks = sum(sizes)
        budget.moved.update(blocked)
    else:
        m.move(job, j, lowest_bits(m.full & ~m.occ[j], s))
        tasks = s
        budget.moved.add(job)
    budget.left -= tasks
    return Migration(job, i, j, option, tuple(blocked), tasks, _penalty(option, job, blocked, cost), over)


def fill_migrating(m: Matrix, clock: Clock, budget: Budget, cost: float,
                   order: Iterable[int] | None = None) -> list[Migration]:
    """FillMatrix-2 ([zhang-comparative] section 6.4): as :func:`fill_matrix`, jobs in
    first-come first-serve order (``order``, default: job number), but where a
    job's columns are busy in a row that has ``size`` empty cells, the
    blocking jobs are migrated to other columns of that row first (option 1
    only, eq. 4).  A blocking job must appear in that row only and not have
    migrated in this pass; the tasks migrated must fit in ``budget.left``.
    Returns the migrations (plain replications are not listed)."""
    jobs = sorted(m.home) if order is None else list(order)
    done: list[Migration] = []
    while True:
        changed = False
        rows = clock.order()
        for job in jobs:
            if job not in m.home:
                continue
            s = m.size[job]
            for p in rows:
                if (m.rows[job] >> p) & 1 or m.free(p) < s:
                    continue
                if not m.occ[p] & m.cols[job]:
                    m.replicate(job, p)
                    changed = True
                    break
                blocked = m.blockers(job, p)
                if any(not m.single(x) or x in budget.moved for x in blocked):
                    continue
                sizes = [m.size[x] for x in blocked]
                tasks = sum(sizes)
                if tasks > budget.left:
                    continue
                _clear_blockers(m, job, p, blocked)
                m.replicate(job, p)
                budget.left -= tasks
                budget.moved.update(blocked)
                done.append(Migration(job, -1, p, 1, tuple(blocked), tasks,
                                      _penalty(1, job, blocked, cost), migration_overhead(1, s, sizes, cost)))
                changed = True
                break
        if not changed:
            return done
