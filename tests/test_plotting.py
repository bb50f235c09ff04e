"""The experiments' figure helpers (issue 16.2): plain tick labels, no
zero faked on a log axis, mean and spread over repetitions said in words,
one legend per figure, every figure regenerated from a saved CSV."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from epochbench.experiments import plotting as pl  # noqa: E402


def test_plain_numbers_never_use_e_notation():
    assert pl.plain(22410.0) == "22,410" and pl.plain(1.5) == "1.5" and pl.plain(0.01) == "0.01"
    assert pl.plain(0) == "0" and "e+" not in pl.plain(2.241e4)


def test_value_scale_keeps_zeros_at_zero():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    assert pl.value_scale(ax, [0.5, 3, 40], label="gap (%, {scale})") == "log"
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "gap (%, log)"
    assert pl.value_scale(ax, [0.0, 0.5, 40], label="gap (%, {scale})") == "symlog"
    assert ax.get_yscale() == "symlog" and "linear below 0.1" in ax.get_ylabel()
    plt.close(fig)


def test_mean_err_and_its_words():
    df = pd.DataFrame({"p": ["a", "a", "a", "b"], "y": [1.0, 2.0, 3.0, 5.0]})
    m = pl.mean_err(df, ["p"], ["y"])
    a, b = m.set_index("p").loc["a"], m.set_index("p").loc["b"]
    assert a["y"] == 2.0 and a["y_err"] == pytest.approx(1.0) and a["reps"] == 3
    assert b["y_err"] == 0.0 and b["reps"] == 1                      # one value: no spread
    ci = pl.mean_err(df, ["p"], ["y"], kind="ci95").set_index("p").loc["a", "y_err"]
    assert ci == pytest.approx(4.303 / np.sqrt(3))
    assert pl.interval_note(m["reps"]) == "mean ± 1 s.d. over 1-3 seeds"
    assert pl.interval_note([1, 1]) == "one run per point: no interval"


def test_one_legend_per_figure_and_an_atomic_write(tmp_path):
    with pl.style():
        fig, axes = pl.figure(1, 2)
        for ax in np.ravel(axes):
            pl.curve(ax, [1, 2], [3, 4], label="same")              # the same series in two panels
        pl.legend(fig)
        assert len(fig.legends) == 1 and len(fig.legends[0].get_texts()) == 1
        pl.save(fig, tmp_path / "f.png", title="a title")
    assert (tmp_path / "f.png").stat().st_size > 0 and not list(tmp_path.glob("*.tmp*"))
