"""Options a crash-fuzzing review found taken without a word, or failing
only after the work was done."""
import numpy as np
import pytest

import epochbench as eb
from epochbench.instances.assignment import AssignmentInstance
from epochbench.instances.mapping import MappingInstance


@pytest.mark.parametrize("method", ["ga", "sa", "tabu"])
def test_a_stats_option_that_is_no_dict_is_refused_before_the_search(method):
    """``stats=[]`` raised AttributeError from ``stats.update`` once the whole search had run."""
    inst = MappingInstance.build([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    with pytest.raises(ValueError, match=rf"{method}: option 'stats' must be a dict .* got list$"):
        eb.solve(inst, method, stats=[])
    stats = {}
    eb.solve(inst, method, stats=stats)
    assert stats


@pytest.mark.parametrize("bad", [-5, 1.5])
def test_imfs_max_even_is_a_whole_number(bad):
    inst = AssignmentInstance.build(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match=rf"imfs: option 'max_even' must be an integer >= 0, got {bad}"):
        eb.solve(inst, "imfs", max_even=bad)
    assert eb.solve(inst, "imfs", max_even=2).value == eb.solve(inst, "imfs").value
