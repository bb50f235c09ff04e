"""The benchmark suite's leaderboards: one row per method and family, sorted
by mean gap, labelled by reference kind, at most 100 columns."""
import numpy as np
import pandas as pd
import pytest

from epochbench.suite import format_leaderboard, leaderboard


def rows():
    out = []
    for i in range(10):
        out += [{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff", "kind": "heuristic",
                 "gap": 0.1 * (i % 3), "gap_kind": "optimum", "seconds": 1e-5 * (i + 1)},
                {"family": "packing", "config": "c", "instance": f"i{i}", "method": "cpsat", "kind": "exact",
                 "gap": 0.0, "gap_kind": "optimum", "seconds": 0.01},
                {"family": "packing", "config": "c", "instance": f"i{i}", "method": "slowbad", "kind": "heuristic",
                 "gap": np.nan, "gap_kind": "no bound", "seconds": 1.0},
                {"family": "mapping", "config": "m", "instance": f"i{i}", "method": "minmin", "kind": "heuristic",
                 "gap": 0.2, "gap_kind": "best known" if i % 2 else "bound", "seconds": 0.001}]
    return pd.DataFrame(out)


def test_one_row_per_method_sorted_by_gap_with_the_reference_kind():
    boards = leaderboard(rows())
    assert list(boards) == ["packing", "mapping"]
    p = boards["packing"]
    assert list(p["method"]) == ["cpsat", "ff", "slowbad"]                    # no gap: last
    ff = p.set_index("method").loc["ff"]
    gaps = np.array([0.1 * (i % 3) for i in range(10)])
    assert ff["solves"] == 10 and np.isclose(ff["mean %"], 100 * gaps.mean())
    assert np.isclose(ff["p90 %"], 100 * np.quantile(gaps, 0.9)) and np.isclose(ff["max %"], 20.0)
    assert np.isclose(ff["at ref %"], 40.0) and np.isclose(ff["median ms"], 1000 * np.median(1e-5 * np.arange(1, 11)))
    assert ff["vs"] == "opt" and boards["mapping"].loc[0, "vs"] == "best/bound"
    assert np.isnan(p.set_index("method").loc["slowbad", "mean %"])


def test_solves_without_an_answer_are_counted_and_rank_after_complete_methods():
    df = rows()
    late = df.index[(df["method"] == "cpsat")][:2]
    df.loc[late, "gap"] = np.nan                    # two timeouts without a solution, an optimum known
    p = leaderboard(df)["packing"].set_index("method")
    assert p.loc["cpsat", "no ans"] == 2 and p.loc["ff", "no ans"] == 0
    assert p.loc["slowbad", "no ans"] == 0          # no reference: no gap, but not a missing answer
    assert list(p.index) == ["ff", "cpsat", "slowbad"] and p.loc["cpsat", "mean %"] == 0.0
    # not at the reference either: score's rule (it read 100 % over the answered solves alone)
    assert p.loc["cpsat", "at ref %"] == 100 * (p.loc["cpsat", "solves"] - 2) / p.loc["cpsat", "solves"]


def test_a_short_assignment_is_never_at_the_reference():
    """A matching with fewer pairs than the maximum: its weight gap may be
    0 (or its weight above the optimum's); score counts it not at the
    reference, the leaderboard counted it at it."""
    df = pd.DataFrame([{"family": "assignment", "config": "c", "instance": f"i{i}", "method": "mis",
                        "kind": "heuristic", "gap": 0.0, "gap_kind": "optimum", "seconds": 1e-4, "short": i == 0}
                       for i in range(4)])
    exact = df.assign(method="hungarian", kind="exact", short=False, seconds=1e-2)
    board = leaderboard(pd.concat([df, exact], ignore_index=True))["assignment"].set_index("method")
    assert board.loc["mis", "at ref %"] == 75.0 and board.loc["mis", "no ans"] == 0
    assert board.loc["mis", "short"] == 1 and board.loc["hungarian", "short"] == 0     # shown, as score shows it
    assert list(board.index) == ["hungarian", "mis"]        # equal mean gaps: the full answers first, however slow


def test_an_exact_mapping_timeout_without_a_mapping_is_no_answer(monkeypatch):
    """It was recorded 'no bound', which the leaderboard does not count:
    bnp read 'no ans 0, at ref 100' beside a proven optimum."""
    from epochbench import suite
    from epochbench.benchmarks import bench_mapping
    monkeypatch.setattr(suite, "BOARD", [])
    monkeypatch.setattr(bench_mapping, "record", suite.record)
    df = pd.DataFrame([{"instance": "i1", "method": "cpsat", "kind": "exact", "status": "optimal", "value": 10.0,
                        "bound": 10.0, "seconds": 1.0},
                       {"instance": "i1", "method": "bnp", "kind": "exact", "status": "timeout", "value": np.nan,
                        "bound": np.nan, "seconds": 30.0}])
    bench_mapping._record_exact_run(df, "32x4")
    board = leaderboard(pd.DataFrame(suite.BOARD))["mapping"].set_index("method")
    assert board.loc["bnp", "no ans"] == 1 and board.loc["bnp", "at ref %"] == 0.0
    assert list(board.index) == ["cpsat", "bnp"]
    suite.BOARD.clear()
    for clash, says in ((df.assign(status="optimal", value=[10.0, 9.0]), "optimum 9: cpsat proved 10"),
                        (df.assign(status=["optimal", "feasible"], value=[10.0, 9.5]), "bnp mapped 9.5"),
                        (df.assign(bound=[10.0, 10.5]), "bnp bound 10.5")):
        with pytest.raises(AssertionError, match=says):
            bench_mapping._record_exact_run(clash, "32x4")
    assert suite.BOARD == []                                        # nothing recorded from a refuted run
    near = df.assign(status="optimal", value=[10.0, 10.0 + 5e-6])  # the solvers' tolerance: the same optimum
    bench_mapping._record_exact_run(near, "32x4")


def test_a_leaderboard_fits_in_100_columns():
    text = format_leaderboard(leaderboard(rows())["packing"])
    assert max(map(len, text.splitlines())) <= 100
    assert "slowbad" in text and " - " in text                                # no gap shown as '-'


def test_pareto_front_keeps_the_methods_nothing_beats_on_both(tmp_path):
    from epochbench.figures import leaderboard_figure, pareto_front
    t = pd.DataFrame({"method": ["a", "b", "c", "d", "e"], "kind": ["heuristic"] * 4 + ["exact"],
                      "mean %": [10.0, 5.0, 7.0, 5.0, 0.0], "median ms": [0.01, 0.1, 0.2, 0.3, 10.0]})
    assert list(pareto_front(t)["method"]) == ["a", "b", "e"]          # c slower and worse than b; d ties b, slower
    # a method short of the first objective, or without an answer, on some solves is never on the front
    # (its mean gap is over part of them; the board ranks it after the rest): without b, c and d join it
    assert list(pareto_front(t.assign(short=[0, 27, 0, 0, 0], **{"no ans": 0}))["method"]) == ["a", "c", "d", "e"]
    assert list(pareto_front(t.assign(**{"no ans": [1, 0, 0, 0, 0]}))["method"]) == ["b", "e"]
    path = leaderboard_figure({"packing": t, "mapping": t}, tmp_path / "board.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_methods_measured_on_different_instances_are_ranked_in_separate_blocks(tmp_path):
    from epochbench.figures import leaderboard_figure
    out = []
    for i in range(4):  # heuristics on big matrices (gap to a best known value), exact only on small ones
        out += [{"family": "mapping", "config": "512x16", "instance": f"b{i}", "method": "minmin",
                 "kind": "heuristic", "gap": 0.05, "gap_kind": "best known", "seconds": 0.01},
                {"family": "mapping", "config": "32x4", "instance": f"s{i}", "method": "minmin",
                 "kind": "heuristic", "gap": 0.20, "gap_kind": "optimum", "seconds": 0.001},
                {"family": "mapping", "config": "32x4", "instance": f"s{i}", "method": "cpsat",
                 "kind": "exact", "gap": 0.0, "gap_kind": "optimum", "seconds": 1.0}]
    board = leaderboard(pd.DataFrame(out))["mapping"]
    assert list(zip(board["set"], board["method"])) == [("512x16", "minmin"), ("32x4", "cpsat"),
                                                        ("32x4", "minmin")]
    assert list(board["solves"]) == [4, 4, 4]
    assert np.allclose(board["mean %"], [5.0, 0.0, 20.0])          # never averaged across the two sets
    text = format_leaderboard(board)
    assert text.index("on 512x16:") < text.index("on 32x4:") and max(map(len, text.splitlines())) <= 100
    assert leaderboard(rows())["packing"]["set"].eq("c").all()      # one set: one block, no headings
    assert "on c:" not in format_leaderboard(leaderboard(rows())["packing"])
    path = leaderboard_figure({"mapping": board}, tmp_path / "board.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_block_is_the_instances_its_methods_all_solved_whatever_the_configurations_are_called():
    out = []
    for size in (10, 50):            # one configuration per method and size, as the assignment benchmark names them
        for i in range(3):
            for method, kind in (("mis", "heuristic"), ("hungarian", "exact")):
                out.append({"family": "assignment", "config": f"{size} {method}", "instance": f"{size}-{i}",
                            "method": method, "kind": kind, "gap": 0.1 if method == "mis" else 0.0,
                            "gap_kind": "optimum", "seconds": 0.001})
            out.append({"family": "assignment", "config": f"{size} mfs (arrive)", "instance": f"{size}-arrive-{i}",
                        "method": "mfs", "kind": "heuristic", "gap": 0.0, "gap_kind": "optimum", "seconds": 0.001})
    board = leaderboard(pd.DataFrame(out))["assignment"]
    assert list(zip(board["set"], board["method"], board["solves"])) == [
        ("6 instances, 2 configurations each", "hungarian", 6), ("6 instances, 2 configurations each", "mis", 6),
        ("6 instances, 2 configurations", "mfs", 6)]       # "4 configurations": 2 methods x 2 sizes
    from epochbench.suite import with_sets
    solves = with_sets(pd.DataFrame(out))                     # bench-solves.csv: each solve's block
    assert solves.groupby("set")["method"].agg(lambda m: sorted(set(m))).to_dict() == {
        "6 instances, 2 configurations each": ["hungarian", "mis"], "6 instances, 2 configurations": ["mfs"]}


def test_labels_of_close_points_neither_overlap_nor_leave_the_axes():
    """Exact methods at gap 0 a few milliseconds apart (a quick packing
    board: cpsat, milp-cbc and milp-highs wrote over each other, under the
    x axis); points that coincide share one label."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from epochbench.figures import place_labels
    fig, ax = plt.subplots(figsize=(4.2, 3.4))
    xs = np.array([0.005, 0.006, 2.4, 9.0, 19.0, 28.0, 28.0])
    ys = np.array([40.0, 12.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    names = ["fcfs", "ff", "mkp-bb", "cpsat", "milp-highs", "milp-cbc", "lns"]
    ax.scatter(xs, ys)
    ax.set_xscale("log")
    ax.set_xlim(0.002, 120)
    ax.set_ylim(-2, 45)
    fig.tight_layout()
    place_labels(ax, xs, ys, names)
    fig.canvas.draw()                                     # the annotations' positions as drawn
    renderer = fig.canvas.get_renderer()
    from matplotlib.text import Text
    texts = {t.get_text(): Text.get_window_extent(t, renderer) for t in ax.texts}    # the text, not its leader
    assert "milp-cbc, lns" in texts and len(texts) == 6
    inside = ax.get_window_extent(renderer)
    boxes = list(texts.values())
    for k, b in enumerate(boxes):
        assert inside.x0 <= b.x0 and b.x1 <= inside.x1 and inside.y0 <= b.y0 and b.y1 <= inside.y1
        assert not any(b.overlaps(o) for o in boxes[k + 1:])
    plt.close(fig)


class _Rounds:
    """A pytest-benchmark fixture's stand-in: runs ``pedantic``'s setup and
    function as the real one does and reports round times chosen per
    instance (2 ms on the first, 1 ms on the others); ``profiled``: one more
    setup and call after the rounds, as ``--benchmark-cprofile`` makes."""

    def __init__(self, profiled=False):
        self.extra_info, self.group, self.stats, self.profiled = {}, None, None, profiled

    def pedantic(self, func, setup, rounds, iterations, warmup_rounds=0):
        data = []
        for k in range(warmup_rounds + rounds):
            args, kw = setup()
            func(*args, **kw)
            if k >= warmup_rounds:
                data.append(0.002 if args[0].name.endswith("_0") else 0.001)
        if self.profiled:                      # --benchmark-cprofile: one more setup for the profiled call
            args, kw = setup()
            func(*args, **kw)
        stats = type("S", (), {"data": data, "median": float(np.median(data))})()
        self.stats = type("B", (), {"stats": stats})()


def test_a_heuristic_s_leaderboard_time_is_its_rounds_median_on_the_instance(monkeypatch):
    """Knapsack, mapping and assignment took the time of one checked solve
    made before the rounds (up to 2.2 times the rounds' median on the fast
    methods); packing and epochs took the rounds' medians."""
    from epochbench import suite
    from epochbench.benchmarks import bench_mapping
    from epochbench.instances.mapping import braun_range
    monkeypatch.setattr(suite, "BOARD", [])
    monkeypatch.setattr(bench_mapping, "record", suite.record)
    insts = braun_range(tasks=16, machines=4, count=3, seed=1)
    request = type("R", (), {"config": type("C", (), {"invocation_params": type("P", (), {"args": ()})()})()})()
    for profiled in (False, True):
        suite.BOARD.clear()
        bench_mapping.test_heuristic_512x16(_Rounds(profiled), (insts, "braun-range"), "minmin", request)
        seconds = {row["instance"]: row["seconds"] for row in suite.BOARD}
        assert seconds == {i.name: 0.002 if i.name.endswith("_0") else 0.001 for i in insts}, (profiled, seconds)


def test_a_method_beating_the_best_known_value_is_the_others_reference(monkeypatch):
    """Each solve's gap was taken against the data set's value and its own
    answer: two greedies above a best known value of 3307.1 both read 0,
    though one is 0.05 % behind the other (the README: the best-known
    reference is "a checked solution of the run that beats it")."""
    import dataclasses

    from epochbench import suite
    from epochbench.instances.registry import solve
    from epochbench.scoring import gap_of
    monkeypatch.setattr(suite, "BOARD", [])
    monkeypatch.setattr(suite, "SOLVED", {})
    inst = eb_generate_mkp()
    results = {m: solve(inst, m) for m in ("greedy-mkp", "greedy-ratio")}
    low = min(r.value for r in results.values()) - 1.0
    inst = dataclasses.replace(inst, meta={**inst.meta, "best_known": low})
    for m, r in results.items():
        g = gap_of(inst, r)
        assert g["gap"] == 0.0                                     # against itself
        suite.record("knapsack", "c", inst.name, m, "heuristic", g["gap"], g["gap_kind"], 1e-4, inst=inst, result=r)
    board = suite.leaderboard_rows().set_index("method")
    best = max(results.values(), key=lambda r: r.value)
    worse = min(results.values(), key=lambda r: r.value)
    assert board.loc[best.method, "gap"] == 0.0
    assert board.loc[worse.method, "gap"] == pytest.approx((best.value - worse.value) / best.value)
    assert set(board["gap_kind"]) == {"best known"}


def eb_generate_mkp():
    """A knapsack instance on which greedy-mkp and greedy-ratio differ."""
    import epochbench as eb
    from epochbench.instances.registry import solve
    for inst in eb.generate("farm-mkp", n=200, machines=50, licenses=10, count=20, seed=3):
        if solve(inst, "greedy-mkp").value != solve(inst, "greedy-ratio").value:
            return inst
    raise AssertionError("no instance where the greedies differ")


def test_packing_extra_info_is_scored_again_against_later_results():
    """A packing benchmark's ``extra_info`` is written when it runs; the
    methods after it may give a better reference (an exact method that
    only bounded at a short limit, one after it proving the optimum), and
    ``Store.refresh_infos`` (called before pytest-benchmark saves) scores
    it again against every result, as the leaderboard does."""
    from epochbench.suite import Config, Store
    store = Store()
    cfg = Config("packing", "leinberger", tuple(sorted(dict(n=8, k=2, dist="uniform", count=2, seed=3).items())),
                 5.0)
    for inst in cfg.instances():
        store.result(cfg, inst, "ff")
    info = store.extra_info(cfg, "ff")
    store.infos.append((cfg, "ff", info))
    before = dict(info)
    assert before["gap_vs"] != ["optimum"]
    for inst in cfg.instances():
        store.result(cfg, inst, "cpsat")
    store.refresh_infos()
    assert info["gap_vs"] == ["optimum"] and info == store.extra_info(cfg, "ff")
    assert [p["gap_kind"] for p in info["per_instance"]] == ["optimum", "optimum"]
    assert info["instances"] == 2 and info["method"] == "ff" and info["kind"] == "heuristic"


def test_exact_solves_cut_short_by_their_limit_are_counted_and_shown_where_there_are_some():
    """An exact method's solve that its limit cut short (a solution, no
    proof) was on the board as any other: its gap (10.7 % for milp-highs on
    a loaded machine) read as the method's, with nothing saying why."""
    rows = [{"family": "packing", "config": "c", "instance": f"i{i}", "method": m, "kind": kind,
             "gap": gap, "gap_kind": "optimum", "seconds": 0.1, "short": False, "status": status}
            for i in range(4) for m, kind, gap, status in (
                ("cpsat", "exact", 0.0, "optimal"),
                ("milp-highs", "exact", 0.1 if i == 0 else 0.0, "feasible" if i == 0 else "optimal"),
                ("ff", "heuristic", 0.2, "feasible"))]
    board = leaderboard(pd.DataFrame(rows))["packing"].set_index("method")
    assert board.loc["milp-highs", "cut"] == 1 and board.loc["cpsat", "cut"] == 0 and board.loc["ff", "cut"] == 0
    text = format_leaderboard(board.reset_index())
    assert " cut " in text.splitlines()[0] and "short" not in text      # only the column that counts something
    clean = leaderboard(pd.DataFrame([r for r in rows if r["method"] != "milp-highs"]))["packing"]
    assert "cut" not in format_leaderboard(clean).splitlines()[0]


def test_ms_by_n_is_the_median_over_decisions_as_on_the_board(monkeypatch):
    """bench-ms-by-n.csv took the median of the configurations' medians (one
    configuration's figure: cpsat at n = 64 read 239 ms where the median of
    its solves was 125 ms); now the median over the solves' decision times."""
    from types import SimpleNamespace

    from epochbench import suite
    cfg = {"a": SimpleNamespace(family="packing", params=(("n", 8),)),
           "b": SimpleNamespace(family="packing", params=(("n", 8),)),
           "c": SimpleNamespace(family="packing", params=(("n", 16),)),
           "e": SimpleNamespace(family="epochs", params=(("n", 8),))}
    times = {"a": [1, 2, 3, 4, 5], "b": [100], "c": [7, 9], "e": [1000]}
    rows = pd.DataFrame([{"family": cfg[c].family, "config": c, "instance": f"{c}{i}", "method": "m",
                          "kind": "heuristic", "gap": 0.0, "gap_kind": "optimum", "seconds": t / 1000,
                          "short": False, "status": "feasible"} for c, ts in times.items() for i, t in enumerate(ts)])
    monkeypatch.setattr(suite, "STORE", SimpleNamespace(configs=cfg))
    monkeypatch.setattr(suite, "leaderboard_rows", lambda: rows)
    table = suite.median_ms_by_size()
    assert table.loc["m", 8] == pytest.approx(3.5) and table.loc["m", 16] == pytest.approx(8.0)
