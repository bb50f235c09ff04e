"""Every JSON the command line writes parses with a strict parser: no NaN,
no Infinity (``null`` where a figure is undefined)."""
import json

import pytest

from epochbench.cli import main
from epochbench.instances.core import json_text
from epochbench.instances.jobs import make_workload, write_swf


def strict(text: str):
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


def test_json_text_turns_non_finite_numbers_into_null():
    import numpy as np
    out = strict(json_text({"a": float("nan"), "b": [np.float64("inf"), 1.5, np.int64(3)], "c": {"d": -np.inf}}))
    assert out == {"a": None, "b": [None, 1.5, 3], "c": {"d": None}}


@pytest.fixture
def swf(tmp_path):
    # every job small: the large-job metrics are undefined (NaN before this fix)
    jobs = {"id": range(1, 7), "submit": [0, 1, 2, 3, 4, 5], "runtime": [10, 20, 30, 40, 50, 60],
            "estimate": [10, 20, 30, 40, 50, 60], "procs": [1, 2, 1, 2, 1, 2]}
    path = tmp_path / "w.swf"
    write_swf(make_workload(jobs, [4]), path)
    return path


@pytest.mark.parametrize("argv", [["--policy", "easy"], ["--policy", "gs", "--mpl", "2"],
                                  ["--machine", "farm", "--policy", "cs-i-p", "--farm-jobs", "20"]])
def test_simulate_json_and_report_are_strict(tmp_path, swf, capsys, argv):
    extra = [] if "farm" in argv else ["--workload", str(swf)]
    assert main(["simulate", *extra, *argv, "--json", "--out", str(tmp_path / "o"), "--quiet"]) == 0
    printed = strict(capsys.readouterr().out)
    saved = strict((tmp_path / "o" / "report.json").read_text())
    assert printed == saved and "metrics" in printed


def test_solve_and_calibrate_json_are_strict(tmp_path, swf, capsys):
    assert main(["generate", "leinberger", "--out", str(tmp_path / "f"), "--n", "5", "--count", "1"]) == 0
    capsys.readouterr()
    f = next(p for p in (tmp_path / "f").glob("*.json") if p.name != "manifest.json")
    for method in ("ff", "cpsat"):
        assert main(["solve", str(f), "--method", method, "--json"]) == 0
        assert strict(capsys.readouterr().out)["method"] == method
    import numpy as np
    rng = np.random.default_rng(1)
    n = 400
    run = rng.integers(10, 2000, n)
    jobs = {"id": range(1, n + 1), "submit": np.cumsum(rng.integers(1, 200, n)), "runtime": run, "estimate": run,
            "procs": rng.integers(1, 9, n)}
    stream = tmp_path / "big.swf"
    write_swf(make_workload(jobs, [8]), stream)
    assert main(["calibrate", str(stream), "--target", "2"]) in (0, 1)
    assert "factor" in strict(capsys.readouterr().out)


def test_help_and_listings_have_no_restructuredtext_markup(capsys):
    import re
    from epochbench.cli_args import plain_text
    assert plain_text("see :func:`~epochbench.sim.pool.simulate_pool` and ``window=2``") == \
        "see simulate_pool and window=2"
    outputs = []
    for argv in (["list"], ["list", "--policies"]):
        assert main(argv) == 0
        outputs.append(capsys.readouterr().out)
    for argv in (["generate", "--help"], ["generate", "vbp", "--help"], ["simulate", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        outputs.append(capsys.readouterr().out)
    for text in outputs:
        assert not re.search(r"``|:(func|mod|class|data|meth):`", text), text[:300]
