"""``zhang-gang-he``: the gang experiments' hyper-Erlang arm next to lublin03."""
import numpy as np

from epochbench.experiments import Options, load_experiments
from epochbench.experiments import zhang_gang as zg


def test_the_hyper_erlang_arm_runs_the_same_sweep_on_its_own_stream():
    exps = load_experiments()
    assert {"zhang-gang", "zhang-gang-he"} <= set(exps)
    quick = Options(quick=True)
    he, lub = zg.tasks_he(quick), zg.tasks(quick)
    assert len(he) == len(lub) and {t["stream"] for t in he} == {"hypererlang"}
    strip = lambda ts: [{k: v for k, v in t.items() if k != "stream"} for t in ts]
    assert strip(he) == strip(lub)                                  # same configurations, loads, seeds


def test_the_hyper_erlang_stream_is_the_kth_fit_on_100_nodes_and_one_row_runs():
    wl, offered = zg.make_stream("hypererlang", 300, 1.0, 0)
    assert wl.capacity.tolist() == [100] and len(wl.jobs) == 300 and 0 < offered < 2
    again, _ = zg.make_stream("hypererlang", 300, 1.0, 0)
    assert np.array_equal(wl.jobs["submit"].to_numpy(), again.jobs["submit"].to_numpy())   # deterministic by seed
    row, = zg.run({"stream": "hypererlang", "policy": "gs", "mpl": 2, "overhead": 0.0, "discrete": False,
                   "point": 1.0, "seed": 0, "jobs": 200})
    assert row["stream"] == "hypererlang" and row["config"] == "GS-2" and 0 < row["utilization"] <= 1
