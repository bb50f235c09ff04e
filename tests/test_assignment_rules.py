"""Matching rules that a one-token change broke unseen (mutation review,
round 7): MIS takes equal entries in row-major order, IMFS keeps the first
row on a gain tie (so from empty it takes MIS's choices on a complete
matrix), and hungarian is 'optimal' only where its BIG + p arithmetic is
exact."""
import numpy as np

from epochbench.exact.assignment import hungarian
from epochbench.heuristics.assignment import imfs, mis
from epochbench.instances.assignment import AssignmentInstance


def test_mis_ties_go_to_the_lower_job_then_machine_among_nine_entries():
    """MIS takes equal entries in row-major order (a stable sort of the
    values).  Value-2 entries in row-major order: (0,0) taken, (1,0)
    blocked, (1,1) taken, (1,2) and (2,1) blocked; then the 1s: (2,2)
    taken.  Pick order and pairs: (0,0), (1,1), (2,2).  An unstable sort
    reaches (1,2) before (1,1) and ends with (1,2), (2,1)."""
    p = [[2, 1, 1], [2, 2, 2], [1, 2, 1]]
    assert mis(AssignmentInstance.build(p)) == [(0, 0), (1, 1), (2, 2)]


def test_imfs_layer_keeps_the_first_row_on_a_gain_tie():
    """_longest_tree: a machine takes another row only for a gain larger by
    more than the tolerance, so on a tie the first row to reach it stays
    its parent.  All-ones 2 x 2: first odd path job 0 -> machine 0, then
    job 1 -> machine 1 (the path job 1 -> machine 0 -> job 0 -> machine 1
    gains as much), as MIS."""
    inst = AssignmentInstance.build(np.ones((2, 2)))
    r = imfs(inst, previous=[])
    assert r.decision == ((0, 0), (1, 1))
    assert sorted(r.decision) == sorted(mis(inst))
    assert r.info["augmentations"] == 2 and r.info["even_steps"] == 0


def test_hungarian_is_not_optimal_when_big_plus_p_is_inexact():
    """Preferences 1e12 and 1e-3 scale to integers 1e15 and 1, so
    BIG = 2 * 1e15 + 1 and (n + m) (BIG + max q) = 1.2e16 >= 2**53: not
    exact, so the matching is 'feasible' with bound None (the pairs are
    still the diagonal, weight 1e12 + 1e-3)."""
    inst = AssignmentInstance.build([[1e12, 0.0], [0.0, 1e-3]], {"name": "far"})
    r = hungarian(inst, time_limit=1.0)
    assert r.decision == ((0, 0), (1, 1))
    assert r.status == "feasible"
    assert r.bound is None


def test_hungarian_is_optimal_on_small_integers():
    """Control: small integer preferences are exact, so 'optimal' with the
    bound equal to the weight (3 + 4 = 7 beats 2 + 1 = 3)."""
    inst = AssignmentInstance.build([[3.0, 2.0], [1.0, 4.0]], {"name": "small"})
    r = hungarian(inst, time_limit=1.0)
    assert r.decision == ((0, 0), (1, 1))
    assert r.status == "optimal" and r.bound == 7.0 == r.value


def test_imfs_tree_keeps_the_first_parent_on_a_tie_lost_in_rounding():
    """With job 0 on machine 0 inherited, machine 1 is reached from job 1
    directly (0.3) and along job 1 -> machine 0 -> job 0 -> machine 1
    (0.2 - 0.1 + 0.2, which floating point makes 0.30000000000000004): a
    tie, so the first parent stays (the tolerance of ``_longest_tree``),
    and job 1 takes machine 1 beside the inherited pair."""
    inst = AssignmentInstance.build([[0.1, 0.2], [0.2, 0.3]])
    assert 0.2 - 0.1 + 0.2 > 0.3
    r = imfs(inst, previous=[(0, 0)], max_even=0)
    assert r.decision == ((0, 0), (1, 1)) and r.info["augmentations"] == 1
