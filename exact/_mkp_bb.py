"""Compiled depth-first branch-and-bound of the 0-1 multidimensional knapsack
(the kernel of :mod:`epochbench.exact.packing_bb`).

``max c @ x  s.t.  A @ x <= b,  x in {0, 1}^n`` with ``A >= 0`` and
integer ``c > 0``, the items already in branching order.  One call explores
at most ``node_limit`` nodes and returns; every piece of the search state
lives in the arrays it is given, so the caller resumes it with the next call
(and checks the wall clock between calls: numba code cannot read it).

At each node the items not yet decided that still fit the residual capacity
give these upper bounds, the smallest one kept ([martello1990]: Dantzig and
surrogate bounds; [kellerer2004]: the multidimensional knapsack; [chvatal1983]:
the bounded-variable simplex):

* the capacity bound ``val + sum_i u_i reach_i`` (``reach_i``: the largest
  load at most ``res_i`` that a subset of the fitting items reaches in row i
  alone, their total when they all fit, ``res_i`` when the row is too wide
  for the bit set), valid when ``c_j <= sum_i u_i A_ij`` for
  every item: the caller passes ``u`` with equality for the utilization
  objective, zeros otherwise (bound off);
* Dantzig's bound of each row alone (the LP of a one-row knapsack: items by
  ``c_j / A_ij``, the last one taken fractionally);
* Dantzig's bound of a surrogate row (the rows summed with weights ``1 / b_i``);
* with ``lpw`` (:func:`lp_scratch`; an empty array: off), the LP relaxation
  of all the rows: first the Lagrangian value of the previous node's duals
  (O(m n)), then a bounded-variable primal simplex started from the items
  those duals price in (:func:`_lp_bound`).  The bound is the Lagrangian
  value of the duals found, valid for any nonnegative duals, so no simplex
  rounding can make it too small.  The caller passes no Dantzig rows then
  (the LP is at most each of them).

On [leinberger1999] epochs with K = 8 (n = 64), the LP cuts the nodes of a
proof from 0.3 to 3 million to 4,000 to 55,000, at about 2.5 us a node.

With the node LP, the node's duals also fix items for its whole subtree
(:func:`_fix`, reduced-cost fixing [nemhauser1988], [vimont2008]): an item
whose taking cannot beat the incumbent is left out, one whose leaving
cannot is taken; the fixings are undone when the search backtracks out of
the node (a trail, as in constraint solvers).  On 30 K = 8 epochs (n = 64,
the search alone) it halves the nodes (median 28,506 to 12,870).  With
``stop``, :func:`search` returns as soon as its incumbent reaches that
value (the bisection of :class:`epochbench.exact.packing_bb._Ladder`).

References
----------
.. [chvatal1983] V. Chvatal. Linear Programming. W. H. Freeman, 1983 (chapter 8: upper-bounded
   variables).
.. [leinberger1999] W. Leinberger, G. Karypis, V. Kumar. Job Scheduling in the Presence of
   Multiple Resource Requirements. Technical Report TR 99-025 (revised May 27, 1999), Department
   of Computer Science and Engineering, University of Minnesota, 1999.
.. [martello1990] S. Martello, P. Toth. Knapsack Problems: Algorithms and Computer
   Implementations. John Wiley & Sons, 1990.
.. [kellerer2004] H. Kellerer, U. Pferschy, D. Pisinger. Knapsack Problems. Springer, 2004.
   https://doi.org/10.1007/978-3-540-24777-7.
.. [nemhauser1988] G. L. Nemhauser, L. A. Wolsey. Integer and Combinatorial Optimization.
   John Wiley & Sons, 1988.
.. [vimont2008] Y. Vimont, S. Boussier, M. Vasquez. Reduced costs propagation in an efficient
   implicit enumeration for the 01 multidimensional knapsack problem. Journal of Combinatorial
   Optimization 15(2):165-178, 2008.

Identical items (same column of ``A`` and same ``c``, adjacent in the order)
are taken as a prefix of their run: the branch that leaves an item out
leaves out the rest of its run too (``nxt``).  A node whose bound does not
exceed the best value found (integers: a better solution is worth at least
``best + 1``) is pruned.
"""
from __future__ import annotations

import numpy as np

from epochbench.instances.lazy import njit

#: entries of the state vector
S_MODE, S_DEPTH, S_POS, S_VAL, S_BEST, S_NODES, S_ROOT, S_TRAIL = range(8)
STATE_SIZE = 8
#: modes: enter the node at ``pos``, backtrack, search finished
ENTER, BACKTRACK, DONE = range(3)
#: ``stop`` of :func:`search` that no value reaches (search to the end)
NEVER = 2**62


def fixing_scratch(n: int) -> tuple:
    """The arrays of the reduced-cost fixing (:func:`_fix`) for n items:
    ``out`` (the items fixed at the nodes on the current path), the trail of
    those fixings and each frame's start on it."""
    return np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int64), np.zeros(n + 1, dtype=np.int64)


@njit(cache=True)
def _reach(a, i, cap, fit, pos, words):
    """The largest load of row ``i`` at most ``cap`` that a subset of the
    fitting items ``pos..`` reaches exactly (one-row subset sum, a bit set in
    ``words``, shift-or per item; stops once ``cap`` is reached).
    O(n cap / 64)."""
    n = a.shape[1]
    nw = cap // 64 + 1
    for w in range(nw):
        words[w] = 0
    words[0] = 1
    top = 0
    for j in range(pos, n):
        if not fit[j]:
            continue
        s = a[i, j]
        if s == 0:
            continue
        ws = s // 64
        bs = s % 64
        hi = (top + s) // 64
        if hi > nw - 1:
            hi = nw - 1
        for w in range(hi, ws - 1, -1):
            v = words[w - ws] << np.uint64(bs)
            if bs > 0 and w - ws - 1 >= 0:
                v |= words[w - ws - 1] >> np.uint64(64 - bs)
            words[w] |= v
        top += s
        if top > cap:
            top = cap
        last = cap % 64
        mask = (np.uint64(1) << np.uint64(last + 1)) - np.uint64(1) if last < 63 else ~np.uint64(0)
        words[nw - 1] &= mask
        if (words[cap // 64] >> np.uint64(cap % 64)) & np.uint64(1):
            return cap
    for w in range(nw - 1, -1, -1):
        v = words[w]
        if v != 0:
            b = 63
            while not ((v >> np.uint64(b)) & np.uint64(1)):
                b -= 1
            return w * 64 + b
    return 0


@njit(cache=True)
def _dantzig(c, dz, dz_order, dz_map, res, fit, r):
    """Dantzig's bound of row r of ``dz`` over the fitting items (no ``val``).
    The capacity of row r at this node: its own residual for a row of
    ``a`` (r < m), the residual weighted by ``dz_map`` for the surrogate row
    (an m x m identity held for the rows of ``a`` made each node O(m^2):
    60 ms a node at K = 10,000)."""
    m = res.shape[0]
    n = c.shape[0]
    cap = 0.0
    if r < m:
        cap += res[r]
    else:
        for i in range(m):
            if dz_map[i] != 0.0:
                cap += dz_map[i] * res[i]
    lp = 0.0
    for t in range(n):
        j = dz_order[r, t]
        if not fit[j]:
            continue
        w = dz[r, j]
        if w <= cap:
            cap -= w
            lp += c[j]
        else:
            lp += c[j] * (cap / w)
            break
    return lp


#: simplex pivots of the node LP (:func:`_lp_bound`) per row; the bound is valid whenever it stops
LP_PIVOTS = 6
#: status of a variable of the node LP: at its lower bound, at its upper bound, basic
AT_ZERO, AT_ONE, BASIC = 0.0, 1.0, 2.0


def lp_scratch(m: int, n: int) -> np.ndarray:
    """Scratch of :func:`_lp_bound` for m rows and n items (float64): the
    duals of the previous node's LP first (0 at the start), then the basis
    inverse, basic values, duals, basic costs, entering column, basic
    variables and the status of the n items and m slacks."""
    return np.zeros(m * m + 7 * m + n, dtype=np.float64)


@njit(cache=True)
def _lagrangian(a, c, res, fit, pos, y):
    """``y res + sum_j max(0, c_j - y A_j)`` over the fitting items: for any
    ``y >= 0`` an upper bound of the LP relaxation.  O(m n)."""
    m, n = a.shape
    bound = 0.0
    for k in range(m):
        bound += y[k] * res[k]
    for j in range(pos, n):
        if fit[j]:
            d = float(c[j])
            for k in range(m):
                d -= y[k] * a[k, j]
            if d > 0.0:
                bound += d
    return bound


@njit(cache=True)
def _crash(a, c, res, fit, pos, y0, binv, xb, cb, bvar, status):
    """The starting basis: the slacks, with the items of positive reduced
    cost under ``y0`` at their upper bound while they fit (so it is
    feasible).  O(m n + m^2)."""
    m, n = a.shape
    for i in range(m):
        for k in range(m):
            binv[i, k] = 0.0
        binv[i, i] = 1.0
        xb[i] = res[i]
        cb[i] = 0.0
        bvar[i] = n + i
        status[n + i] = BASIC
    for j in range(n):
        status[j] = AT_ZERO
    for j in range(pos, n):
        if not fit[j]:
            continue
        d = float(c[j])
        ok = True
        for k in range(m):
            d -= y0[k] * a[k, j]
            if a[k, j] > xb[k]:
                ok = False
        if ok and d > 0.0:
            status[j] = AT_ONE
            for k in range(m):
                xb[k] -= a[k, j]


@njit(cache=True)
def _duals(binv, cb, y):
    """``y = c_B B^-1``.  O(m^2)."""
    m = cb.shape[0]
    for k in range(m):
        t = 0.0
        for i in range(m):
            t += cb[i] * binv[i, k]
        y[k] = t


@njit(cache=True)
def _price(a, c, fit, pos, y, status):
    """Dantzig's rule: the nonbasic variable (item, or ``n + k`` for slack k)
    whose move off its bound gains the most, and its direction (+1 up, -1
    down); (-1, 0) at an optimum.  O(m n)."""
    m, n = a.shape
    q, sig, gain = -1, 0.0, 1e-9
    for j in range(pos, n):
        if not fit[j] or status[j] == BASIC:
            continue
        d = float(c[j])
        for k in range(m):
            d -= y[k] * a[k, j]
        if status[j] == AT_ZERO and d > gain:
            q, sig, gain = j, 1.0, d
        elif status[j] == AT_ONE and -d > gain:
            q, sig, gain = j, -1.0, -d
    for k in range(m):
        if status[n + k] != BASIC and -y[k] > gain:
            q, sig, gain = n + k, 1.0, -y[k]
    return q, sig


@njit(cache=True)
def _ratio(a, q, sig, binv, xb, bvar, alpha):
    """The entering column ``alpha = B^-1 A_q`` and the ratio test of the
    bounded-variable simplex: (step, leaving row), row -1 when the entering
    item reaches its other bound first.  O(m^2)."""
    m, n = a.shape
    for i in range(m):
        t = 0.0
        if q < n:
            for k in range(m):
                t += binv[i, k] * a[k, q]
        else:
            t = binv[i, q - n]
        alpha[i] = t
    step = 1.0 if q < n else np.inf
    leave = -1
    for i in range(m):
        d = sig * alpha[i]
        if d > 1e-9:
            r = xb[i] / d
        elif d < -1e-9 and bvar[i] < n:
            r = (1.0 - xb[i]) / -d
        else:
            continue
        if r < step:
            step, leave = r, i
    return step, leave


@njit(cache=True)
def _pivot(c, n, q, sig, step, leave, binv, xb, cb, bvar, status, alpha):
    """Move the entering variable ``q`` by ``step`` and make it basic in row
    ``leave`` (the leaving one goes to the bound it reached).  O(m^2)."""
    m = xb.shape[0]
    for i in range(m):
        xb[i] -= sig * step * alpha[i]
    value = (status[q] + sig * step) if q < n else step
    out = int(bvar[leave])
    status[out] = AT_ONE if out < n and xb[leave] > 0.5 else AT_ZERO
    piv = alpha[leave]
    for k in range(m):
        binv[leave, k] /= piv
    for i in range(m):
        if i != leave and alpha[i] != 0.0:
            f = alpha[i]
            for k in range(m):
                binv[i, k] -= f * binv[leave, k]
    bvar[leave] = q
    xb[leave] = value
    cb[leave] = float(c[q]) if q < n else 0.0
    status[q] = BASIC


@njit(cache=True)
def _lp_bound(a, c, res, fit, pos, lpw, first):
    """An upper bound of the LP relaxation ``max c x, A x <= res, 0 <= x <= 1``
    over the fitting items: :func:`_lagrangian` of the duals ``y >= 0`` of
    a bounded-variable primal simplex ([chvatal1983] chapter 8; Dantzig's
    rule, at most :data:`LP_PIVOTS` pivots per row: the bound is valid for
    any ``y >= 0``, so rounding or an early stop only weakens it), started
    by :func:`_crash` from the previous node's duals ``y0``; at most
    ``first`` (the bound of ``y0``).  Its duals become the next node's
    ``y0``.  ``lpw``: :func:`lp_scratch`.  O(pivots (m n + m^2))."""
    m, n = a.shape
    y0 = lpw[:m]
    binv = lpw[m: m + m * m].reshape(m, m)
    o = m + m * m
    xb, y, cb = lpw[o: o + m], lpw[o + m: o + 2 * m], lpw[o + 2 * m: o + 3 * m]
    alpha, bvar = lpw[o + 3 * m: o + 4 * m], lpw[o + 4 * m: o + 5 * m]
    status = lpw[o + 5 * m: o + 6 * m + n]
    _crash(a, c, res, fit, pos, y0, binv, xb, cb, bvar, status)
    for _ in range(LP_PIVOTS * m):
        _duals(binv, cb, y)
        q, sig = _price(a, c, fit, pos, y, status)
        if q < 0:
            break
        step, leave = _ratio(a, q, sig, binv, xb, bvar, alpha)
        if step == np.inf:
            break
        if leave < 0:                    # the entering item flips to its other bound
            for i in range(m):
                xb[i] -= sig * step * alpha[i]
            status[q] = 1.0 - status[q]
            continue
        _pivot(c, n, q, sig, step, leave, binv, xb, cb, bvar, status, alpha)
    _duals(binv, cb, y0)                 # kept for the next node
    for k in range(m):
        y0[k] = max(y0[k], 0.0)
    return min(first, _lagrangian(a, c, res, fit, pos, y0))


@njit(cache=True)
def _floor(f, size=0.0):
    """An LP value ``f`` as an integer bound: rounded down after a relative
    slack of 1e-9 of ``f`` or of ``size`` (the magnitude of the terms ``f``
    was computed from, when they cancel), so that float error never makes
    it too small."""
    return np.floor(f + 1e-9 * max(1.0, abs(f), size))


@njit(cache=True)
def _fits(a, j, res):
    """Item j fits the residual ``res``.  O(m)."""
    for i in range(a.shape[0]):
        if a[i, j] > res[i]:
            return False
    return True


@njit(cache=True)
def _node_bound(a, c, u, use_cap, dz, dz_order, dz_map, res, val, pos, fit, rest, words, best, lpw, out):
    """Integer upper bound of the best value below the node (items ``pos..``
    undecided, residual ``res``, value so far ``val``); marks the fitting
    items in ``fit`` and sums their needs per row in ``rest`` (scratch).
    Returns ``(bound, first fitting item or -1)``.  The bounds are taken
    cheapest first (the capacity bound with every overfilled row at its
    residual, the Lagrangian of the previous node's LP duals, the Dantzig
    rows, the subset sums row by row, then the node LP) and the work stops
    once the bound is at most ``best``: the node is pruned then and its
    exact bound is not needed.  O((m + q) n + K n w + LP)."""
    m, n = a.shape
    first = -1
    total = 0
    for j in range(n):
        fit[j] = False
    for i in range(m):
        rest[i] = 0
    for j in range(pos, n):
        if not out[j] and _fits(a, j, res):
            fit[j] = True
            if first < 0:
                first = j
            total += c[j]
            for i in range(m):
                rest[i] += a[i, j]
    if first < 0:
        return val, -1
    bound = val + total
    cb = val
    if use_cap:
        for i in range(m):
            cb += u[i] * min(rest[i], res[i])
        if cb < bound:
            bound = cb
    if bound <= best:
        return bound, first
    lp = np.inf
    if lpw.shape[0] > 0 and m > 1:      # the previous node's LP duals (lpw[:m]): O(m n)
        lp = _lagrangian(a, c, res, fit, pos, lpw[:m])
        bf = _floor(val + lp)
        if bf < bound:
            bound = np.int64(bf)
            if bound <= best:
                return bound, first
    for r in range(dz.shape[0]):
        f = val + _dantzig(c, dz, dz_order, dz_map, res, fit, r)
        bf = _floor(f)
        if bf < bound:
            bound = np.int64(bf)
            if bound <= best:
                return bound, first
    if use_cap:
        for i in range(m):
            if u[i] == 0 or rest[i] <= res[i] or res[i] >= words.shape[0] * 64:
                continue
            cb -= u[i] * (res[i] - _reach(a, i, res[i], fit, pos, words))
            if cb < bound:
                bound = cb
                if bound <= best:
                    return bound, first
    if lpw.shape[0] > 0 and m > 1:
        f = val + _lp_bound(a, c, res, fit, pos, lpw, lp)
        bf = _floor(f)
        if bf < bound:
            bound = np.int64(bf)
    return bound, first


@njit(cache=True)
def _fix(a, c, res, val, pos, fit, best, y, out, x, trail, tl):
    """Reduced-cost fixing at a node ([nemhauser1988]; [vimont2008] for
    the multidimensional knapsack):
    with the node LP's duals ``y >= 0``, the Lagrangian value ``L`` bounds
    every selection below the node, one that takes item j by ``L + min(0,
    r_j)`` and one that leaves it by ``L - max(0, r_j)`` (``r_j = c_j - y
    A_j``).  Items whose taking cannot beat ``best`` are left out of the
    node's subtree, items whose leaving cannot are taken at once (both
    marked in ``out`` and recorded on ``trail`` from ``tl``, a taken item
    as ``n + j``); when those cannot all be taken together, nothing below
    the node beats ``best``.  Returns ``(tl, val, whether the node can
    still beat best)``.  O(m n)."""
    m, n = a.shape
    lag = val + _lagrangian(a, c, res, fit, pos, y)
    for j in range(pos, n):
        if not fit[j]:
            continue
        d = float(c[j])
        for k in range(m):
            d -= y[k] * a[k, j]
        if d < 0.0 and _floor(lag + d, lag - d) <= best:
            fit[j] = False
            out[j] = True
            trail[tl] = j
            tl += 1
        elif d > 0.0 and _floor(lag - d, lag + d) <= best:
            if not _fits(a, j, res):
                return tl, val, False
            for k in range(m):
                res[k] -= a[k, j]
            val += c[j]
            x[j] = 1
            fit[j] = False
            out[j] = True
            trail[tl] = n + j
            tl += 1
    return tl, val, True


@njit(cache=True)
def _first_fitting(a, res, fit, pos):
    """The first item from ``pos`` on still marked in ``fit`` that fits the
    residual ``res`` (-1: none).  O(m n)."""
    for j in range(pos, a.shape[1]):
        if fit[j] and _fits(a, j, res):
            return j
    return -1


@njit(cache=True)
def _undo(a, c, res, val, x, out, trail, tl, to):
    """Undo the trail down to ``to`` (:func:`_fix`); returns ``val``.  O(m (tl - to))."""
    m, n = a.shape
    for t in range(to, tl):
        j = trail[t]
        if j >= n:
            j -= n
            for k in range(m):
                res[k] += a[k, j]
            val -= c[j]
            x[j] = 0
        out[j] = False
    return val


@njit(cache=True)
def search(a, c, u, use_cap, dz, dz_order, dz_map, nxt, state, res, x, best_x, stack_j, stack_stage,
           stack_bound, fit, rest, words, node_limit, lpw, out, trail, stack_trail, stop):
    """Run the branch-and-bound for at most ``node_limit`` nodes from
    ``state``, fewer once the incumbent reaches ``stop`` (:data:`NEVER`:
    no such stop); returns True when the search is finished (``best_x``
    proven optimal).  ``res`` (m), ``x`` (n, the current 0-1 vector), the
    three stacks (n + 1) and the fixing arrays (``out``, ``trail``,
    ``stack_trail``: :func:`fixing_scratch`, used with the node LP) hold the
    rest of the state; ``fit`` (n) and ``rest`` (m) are scratch.
    O(node_limit (m + q) n)."""
    m, n = a.shape
    mode = state[S_MODE]
    d = state[S_DEPTH]
    pos = state[S_POS]
    val = state[S_VAL]
    best = state[S_BEST]
    nodes = state[S_NODES]
    tl = state[S_TRAIL]
    fixing = lpw.shape[0] > 0 and m > 1
    done_here = 0
    while True:
        if mode == DONE:
            break
        if done_here >= node_limit:
            break
        if mode == ENTER:
            nodes += 1
            done_here += 1
            if val > best:
                best = val
                for j in range(n):
                    best_x[j] = x[j]
                if best >= stop:
                    done_here = node_limit       # the caller's target reached: return after this node
            bound, j = _node_bound(a, c, u, use_cap, dz, dz_order, dz_map, res, val, pos, fit, rest, words, best,
                                   lpw, out)
            if d == 0 and state[S_ROOT] < 0:
                state[S_ROOT] = bound if bound > best else best
            if j < 0 or bound <= best:
                mode = BACKTRACK
                continue
            stack_trail[d] = tl
            if fixing:
                tl, val, live = _fix(a, c, res, val, pos, fit, best, lpw[:m], out, x, trail, tl)
                if live and val > best:
                    best = val
                    for t in range(n):
                        best_x[t] = x[t]
                    if best >= stop:
                        done_here = node_limit
                j = _first_fitting(a, res, fit, pos) if live else -1
                if j < 0:
                    val = _undo(a, c, res, val, x, out, trail, tl, stack_trail[d])
                    tl = stack_trail[d]
                    mode = BACKTRACK
                    continue
            stack_j[d] = j
            stack_stage[d] = 0
            stack_bound[d] = bound
            d += 1
            for i in range(m):
                res[i] -= a[i, j]
            val += c[j]
            x[j] = 1
            pos = j + 1
        else:
            if d == 0:
                mode = DONE
                break
            top = d - 1
            j = stack_j[top]
            if stack_stage[top] == 0:
                for i in range(m):
                    res[i] += a[i, j]
                val -= c[j]
                x[j] = 0
                stack_stage[top] = 1
                pos = nxt[j]
                mode = ENTER
            else:                        # both children done: undo the node's fixings
                val = _undo(a, c, res, val, x, out, trail, tl, stack_trail[top])
                tl = stack_trail[top]
                d -= 1
    state[S_MODE] = mode
    state[S_DEPTH] = d
    state[S_POS] = pos
    state[S_VAL] = val
    state[S_BEST] = best
    state[S_NODES] = nodes
    state[S_TRAIL] = tl
    return mode == DONE


@njit(cache=True)
def open_bound(state, stack_stage, stack_bound):
    """A valid upper bound of the unexplored part of an unfinished search:
    the largest bound of the frames whose subtrees still hold work (the
    frames in their first branch; the top frame when its second child is
    yet to be entered), at least the best value.  O(depth)."""
    best = state[S_BEST]
    d = state[S_DEPTH]
    out = best
    for f in range(d):
        pending = stack_stage[f] == 0 or (f == d - 1 and state[S_MODE] == ENTER)
        if pending and stack_bound[f] > out:
            out = stack_bound[f]
    if d == 0 and state[S_MODE] == ENTER:  # the root itself not evaluated yet
        return -1
    return out
