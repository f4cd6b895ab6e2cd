"""incast.drop_curve: OWD-versus-drop curves of a sweep, pooled, and the claims read from them."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import REPO
from incast import drop_curve
from incast.experiment import load_experiment
from incast.sweep import sweep

POINTS = ["dcqcn_60_2mb", "dcqcn_80_2mb"]


@pytest.fixture(scope="module")
def curve_sweep(tmp_path_factory):
    """scenarios/smart_pause/owd_curve.toml at k = 4 (16 hosts, 1 MB, 3 ms), seeds 1-2."""
    small = [
        ("topology.k", 4),
        ("switch.buffer", "1000KB"),
        ("duration", "3ms"),
        ("metrics.warmup", "0.5ms"),
    ]
    experiment = load_experiment(
        REPO / "scenarios" / "smart_pause" / "owd_curve.toml", overrides=small, seeds=[1, 2]
    )
    out = tmp_path_factory.mktemp("curve")
    assert sweep(experiment, out, jobs=2, plots=False).complete
    return out


def _runs(out, point):
    return drop_curve._run_dirs(out, point, "nopfc")


def test_cells_add_up_to_the_runs_drops(curve_sweep):
    """Every data packet dropped is in exactly one cell of the curve."""
    for point in POINTS:
        for run in _runs(curve_sweep, point):
            summary = json.loads((run / "summary.json").read_text())
            groups = summary["edge"]["owd_drop_curve"]
            dropped = sum(
                g["before_any_reading"]["dropped"] + sum(b["dropped"] for b in g["bins"])
                for g in groups
            )
            assert dropped == summary["drops"]["packets"] > 0
            assert {g["switch_hops"] for g in groups} == {1, 3, 5}


def test_pooling_sums_the_seeds(curve_sweep):
    runs = _runs(curve_sweep, POINTS[1])
    both = drop_curve.pooled(runs, POINTS[1])
    one, two = (drop_curve.pooled([run], POINTS[1]) for run in runs)
    assert both.seeds == 2
    for hops, table in both.windows.items():
        parts = pd.concat([one.windows[hops], two.windows[hops]])
        summed = parts.groupby("owd_lo_us")[["sent", "dropped"]].sum().reset_index()
        pd.testing.assert_frame_equal(table[["owd_lo_us", "sent", "dropped"]], summed)
        first = [c.first_round_trip[hops] for c in (one, two)]
        assert both.first_round_trip[hops] == tuple(map(sum, zip(*first)))


def test_onset_and_rise_on_a_known_curve():
    table = pd.DataFrame(
        {
            "owd_lo_us": [0.0, 10.0, 20.0, 30.0, 40.0, 50.0],
            "sent": [10_000, 5_000, 3_000, 100, 1_000, 500],
            "dropped": [0, 0, 0, 50, 20, 25],
        }
    )
    table["drop_probability"] = table["dropped"] / table["sent"]
    # 30-40 us drops half its packets, but 100 packets are too few to count.
    assert drop_curve.onset(table, level=0.01, min_sent=200) == 40.0
    assert drop_curve.onset(table, level=0.01, min_sent=50) == 30.0
    assert drop_curve.onset(table, level=0.1, min_sent=200) is None
    assert drop_curve.rises(table, level=0.01, quiet_below_us=30.0, min_sent=200)
    table.loc[1, "dropped"] = 5  # 0.1 % at 10-20 us: not quiet at a 1 % level
    table["drop_probability"] = table["dropped"] / table["sent"]
    assert not drop_curve.rises(table, level=0.01, quiet_below_us=30.0, min_sent=200)


def test_claim_rows(curve_sweep):
    claim = {"id": "c", "points": POINTS, "check": "rises"}
    value, text, spread, verdict = drop_curve.claim_row(claim, curve_sweep)
    assert verdict in ("reproduced", "contradicted")
    assert all(point in text and point in spread for point in POINTS)
    assert "1 / 3 / 5 switches" in text
    with pytest.raises(drop_curve.CurveError, match="check"):
        drop_curve.claim_row({**claim, "check": "falls"}, curve_sweep)
    table = drop_curve.markdown(curve_sweep, POINTS)
    assert table.count("| 5 |") == 2


def test_a_sweep_without_the_curve_says_what_to_run(tmp_path):
    run = tmp_path / "runs" / "p.nopfc.s1"
    run.mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps({"edge": None}))
    pd.DataFrame(
        {"point": ["p"], "variant": ["nopfc"], "seed": [1], "dir": ["runs/p.nopfc.s1"]}
    ).to_parquet(tmp_path / "points.parquet")
    with pytest.raises(drop_curve.CurveError, match="drop_curve"):
        drop_curve.claim_row({"id": "c", "points": ["p"], "check": "rises"}, tmp_path)
    with pytest.raises(drop_curve.CurveError, match="no runs of point `q`"):
        drop_curve.claim_row({"id": "c", "points": ["q"], "check": "rises"}, tmp_path)


def test_a_runs_report_and_plot_show_the_curve(curve_sweep, tmp_path):
    """The terminal/HTML report rows and owd_drop_curve.png of one run with the curve; none
    for a run without it."""
    from incast import plots
    from incast.report import edge_rows

    run = _runs(curve_sweep, POINTS[0])[0]
    summary = json.loads((run / "summary.json").read_text())
    rows = dict(edge_rows(summary)[0])
    assert rows["drop onset (1 %), 1 / 3 / 5 switches"].endswith(" us")
    dropped = summary["drops"]["packets"]
    assert rows["drops before the flow's first reading"].endswith(f"of {dropped:,}")
    assert drop_curve.summary_rows({"edge": {"rule": "none"}}) == []

    class Run:
        scenario_name = "curve"

    result = Run()
    result.summary = summary
    path = plots.plot_owd_drop_curve(result, tmp_path / "curve.png")
    assert path is not None and path.stat().st_size > 0
    result.summary = {"edge": {"rule": "none"}}
    assert plots.plot_owd_drop_curve(result, tmp_path / "none.png") is None
    # The open last cell (readings of at least `max`) is known, so the plot leaves it out.
    assert drop_curve.merged([summary["edge"]["owd_drop_curve"]], "r").open_from_us in (None, 300.0)
