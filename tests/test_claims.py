"""scenarios/claims.py: a reproduction's claims are computed from runs, never typed in."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import REPO, load_script
from incast.experiment import load_experiment
from incast.sweep import sweep

#: Talks whose claims are computed by scenarios/claims.py.
TALKS = ["smart_pause", "congestion_isolation", "netronome_fb", "on_ramp", "ibm_ecm"]


def _claims_module():
    return load_script(REPO / "scenarios" / "claims.py", "claims")


claims = _claims_module()


@pytest.mark.parametrize("talk", TALKS)
def test_small_rows_are_current(talk, tmp_path):
    """The small experiment, seed 1, gives exactly the committed claims_small.csv: a model,
    metric or claims.toml change that moves a claim makes this fail until the rows are
    recomputed (`python scenarios/claims.py TALK --sweep small=DIR --small-csv
    scenarios/TALK/claims_small.csv` after `incast sweep scenarios/TALK/small.toml --seeds 1`)."""
    out = tmp_path / "small"
    experiment = load_experiment(REPO / "scenarios" / talk / "small.toml", seeds=[1])
    outcome = sweep(experiment, out, jobs=2, plots=False)
    assert outcome.complete
    fresh = tmp_path / "claims_small.csv"
    assert claims.main([talk, "--sweep", f"small={out}", "--small-csv", str(fresh)]) == 0
    committed = pd.read_csv(REPO / "scenarios" / talk / "claims_small.csv", keep_default_na=False)
    got = pd.read_csv(fresh, keep_default_na=False)
    stale = [
        f"{row.id}: committed {row.incast} ({row.verdict}), now {new.incast} ({new.verdict})"
        for row, new in zip(committed.itertuples(), got.itertuples())
        if (row.id, row.incast, row.verdict) != (new.id, new.incast, new.verdict)
    ]
    assert list(committed["id"]) == list(got["id"]), "claims added or removed: recompute"
    assert not stale, "stale small rows:\n" + "\n".join(stale)


@pytest.mark.parametrize("talk", TALKS)
def test_claims_csv_and_readme_come_from_claims_toml(talk):
    doc = claims.load_claims(talk)
    table = pd.read_csv(REPO / "scenarios" / talk / "claims.csv", keep_default_na=False)
    assert list(table["id"]) == [c["id"] for c in doc["claim"]]
    assert set(table["verdict"]) <= set(claims.VERDICTS)
    computed = table[table["verdict"].isin(["reproduced", "direction", "contradicted"])]
    assert (computed["computed_at"] != "").all(), "a computed row without its commit"
    readme = (REPO / "scenarios" / talk / "README.md").read_text()
    assert claims.replace_block(readme, talk, claims.markdown(table)) == readme, (
        "the README's claim table differs from claims.csv: run scenarios/claims.py --write"
    )


def test_verdicts():
    assert claims._side(3.8, 3.2, 0.25) == "reproduced"
    assert claims._side(3.8, 1.6, 0.25) == "direction"
    assert claims._side(3.8, 0.9, 0.25) == "contradicted"
    assert claims._side(0.5, 1.2, 0.25) == "contradicted"
    assert claims._order([1.4, 1.6, 1.8]) == claims._order([3.8, 4.2, 4.6])
    assert claims._order([2.1, 1.9, 2.4]) != claims._order([3.2, 3.6, 4.1])


def test_a_bad_claims_file_is_named(tmp_path, monkeypatch):
    (tmp_path / "talk").mkdir()
    (tmp_path / "talk" / "claims.toml").write_text(
        '[[claim]]\nid = "a"\nclaim = "x"\ntalk = 2.0\nkind = "not_run"\n'
    )
    monkeypatch.setattr(claims, "HERE", tmp_path)
    with pytest.raises(claims.ClaimsError, match="`a` \\(not_run\\) needs a `why`"):
        claims.load_claims("talk")
    assert claims.main(["talk", "--sweep", "full"]) == 2


def _sweep_of(rows: list[dict]) -> claims.Sweep:
    """A Sweep over a made-up points table (no run directories)."""
    sweep = claims.Sweep.__new__(claims.Sweep)
    sweep.name, sweep.dir, sweep.points = "t", None, pd.DataFrame(rows)
    return sweep


def _run(point: str, variant: str, seed: int, **metrics: float) -> dict:
    return {"point": point, "variant": variant, "seed": seed, "dir": "-", **metrics}


def test_cut_value_and_overhead_kinds():
    """The Congestion Isolation kinds: a percentage cut, a value (a share with an absolute
    tolerance and a pivot; a band), and control messages per PAUSE frame saved."""
    sweep = _sweep_of(
        [
            _run("a", "noci", 1, pause=1000.0, share=float("nan"), cips=float("nan"), mice=80.0),
            _run("a", "ci", 1, pause=450.0, share=0.97, cips=40.0, mice=80.0),
            _run("a", "noci", 2, pause=1000.0, share=float("nan"), cips=float("nan"), mice=84.0),
            _run("a", "ci", 2, pause=490.0, share=0.99, cips=60.0, mice=84.0),
            _run("b", "noci", 1, pause=100.0, share=float("nan"), cips=float("nan"), mice=1.0),
            _run("b", "ci", 1, pause=120.0, share=0.5, cips=30.0, mice=1.0),
        ]
    )
    sweeps = {"t": sweep}
    pair = {"sweep": "t", "baseline": "noci", "variant": "ci"}
    cut = {"id": "c", "kind": "cut", "talk": -53, "point": "a", "metric": "pause", **pair}
    row = claims.compute(cut, sweeps, {}, 0.25)
    assert (row.text, row.verdict) == ("-53 %", "reproduced")
    assert row.spread == "-55.00--51.00 % (2 seeds)"
    up = claims.compute({**cut, "point": "b"}, sweeps, {}, 0.25)
    assert (up.text, up.verdict) == ("+20 %", "contradicted")
    assert claims.compute({**cut, "talk": -90}, sweeps, {}, 0.25).verdict == "direction"

    share = {"id": "s", "kind": "value", "talk": 96.6, "point": "a", "metric": "share", **pair}
    share |= {"scale": 100, "unit": " %", "tolerance_abs": 3.5, "pivot": 50}
    assert claims.compute(share, sweeps, {}, 0.25).verdict == "reproduced"
    assert claims.compute({**share, "point": "b"}, sweeps, {}, 0.25).verdict == "contradicted"
    assert claims.compute({**share, "talk": 60.0}, sweeps, {}, 0.25).verdict == "direction"
    per = {**share, "metric": "cips", "per": ["pause"], "talk": 0, "within": [0.1, 10]}
    assert claims.compute(per, sweeps, {}, 0.25).verdict == "contradicted"  # 0.06-0.12 x 100
    band = claims.compute({**per, "scale": 1, "within": [0.05, 0.2]}, sweeps, {}, 0.25)
    assert band.verdict == "reproduced"

    over = {"id": "o", "kind": "overhead", "point": "a", "metric": "cips", "saved": "pause", **pair}
    row = claims.compute({**over, "talk": "much less", "below": 0.1}, sweeps, {}, 0.25)
    assert row.verdict == "reproduced" and row.text == "0.09 (50 sent, +530 PAUSE saved)"
    none = claims.compute({**over, "talk": "much less", "point": "b"}, sweeps, {}, 0.25)
    assert none.verdict == "contradicted" and none.text.startswith("none saved")


def test_all_improve_over_points_names_the_worst_point():
    sweep = _sweep_of(
        [
            _run("a", "noci", 1, fct=10.0),
            _run("a", "ci", 1, fct=5.0),
            _run("b", "noci", 1, fct=10.0),
            _run("b", "ci", 1, fct=11.0),
        ]
    )
    claim = {"id": "f", "kind": "all_improve", "talk": "better", "sweep": "t", "metric": "fct"}
    claim |= {"points": ["a", "b"], "baseline": "noci", "variant": "ci"}
    row = claims.compute(claim, {"t": sweep}, {}, 0.25)
    assert (row.text, row.verdict) == ("0.91x (b)", "contradicted")
    assert row.spread == "0.91-2.00x over 2 point-columns"
    only_a = claims.compute({**claim, "points": ["a"]}, {"t": sweep}, {}, 0.25)
    assert only_a.verdict == "reproduced"


def test_ratio_and_rises_kinds():
    """The Netronome kinds: one variant's mean over the baseline's (a share, with an absolute
    tolerance and the default pivot 1 x scale; a zero baseline gives no ratio), and a curve that
    must never fall."""
    sweep = _sweep_of(
        [
            _run("a", "cubic", 1, drops=100.0, util=0.8),
            _run("a", "dctcp", 1, drops=0.0, util=0.9),
            _run("a", "cubic", 2, drops=300.0, util=0.8),
            _run("a", "dctcp", 2, drops=1.0, util=0.9),
            _run("b", "cubic", 1, drops=0.0, util=0.85),
            _run("b", "dctcp", 1, drops=0.0, util=0.95),
        ]
    )
    sweeps = {"t": sweep}
    share = {"id": "r", "kind": "ratio", "talk": 0.3, "point": "a", "metric": "drops"}
    share |= {"sweep": "t", "baseline": "cubic", "variant": "dctcp", "scale": 100, "unit": " %"}
    row = claims.compute(share, sweeps, {}, 0.25)
    assert (row.text, row.verdict) == ("0.25 %", "reproduced")  # 0.5 / 200 of the means
    assert claims.compute({**share, "talk": 2.0}, sweeps, {}, 0.25).verdict == "direction"
    assert claims.compute({**share, "talk": 150}, sweeps, {}, 0.25).verdict == "contradicted"
    none = claims.compute({**share, "point": "b"}, sweeps, {}, 0.25)
    assert (none.text, none.verdict) == ("- (baseline 0)", "contradicted")
    zero = {**share, "talk": 0, "tolerance_abs": 0.0}
    assert claims.compute(zero, sweeps, {}, 0.25).verdict == "direction"

    curve = {"id": "c", "kind": "rises", "talk": "rises", "sweep": "t", "metric": "util"}
    curve |= {"points": ["a", "b"], "variant": "cubic", "digits": 2}
    row = claims.compute(curve, sweeps, {}, 0.25)
    assert (row.text, row.verdict) == ("0.80 / 0.85", "reproduced")
    back = claims.compute({**curve, "points": ["b", "a"]}, sweeps, {}, 0.25)
    assert back.verdict == "contradicted"


def _on_ramp_run(directory, flows, stop, incast=()):
    """A made-up run directory: the scenario, the receiver port (node 9, port 4, 100 Gb/s), its
    sampled series (10 MB at 1 ms falling to 0.5 MB at 3 ms, 8 Gb sent every ms) and incasts."""
    directory.mkdir()
    scenario = {"stop": stop, "workload": {"flows": flows, "incast": list(incast)}}
    (directory / "scenario.json").write_text(json.dumps(scenario))
    pd.DataFrame(
        {
            "node": [9, 0],
            "port": [4, 0],
            "peer": [12, 9],
            "rate_bps": [100e9] * 2,
            "tx_bytes": [25_000_000, 0],
        }
    ).to_parquet(directory / "ports.parquet")
    ms = 1_000_000_000
    pd.DataFrame(
        {
            "time_ps": [0, ms, 2 * ms, 3 * ms, 4 * ms],
            "node": [9] * 5,
            "port": [4] * 5,
            "bytes": [0, 10_000_000, 5_000_000, 500_000, 0],
            "tx_bytes": [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000],
        }
    ).to_parquet(directory / "queues.parquet")
    pd.DataFrame(
        {"receiver": [1, 2, 1], "finished": [1, 1, 0], "completion_ps": [10e6, 30e6, 99e6]}
    ).to_parquet(directory / "incasts.parquet")


def test_on_ramp_derived_metrics(tmp_path):
    """The On-Ramp metrics against their closed forms: utilization over the window after the last
    flow's start (1 MB per ms at 100 Gb/s = 8 %), the whole run when every flow starts at 0
    (25 MB in 2 ms = 100 %), the queue's drain time, and a host group's incast completion."""
    joined = [{"dst": 12, "start": "0ps"}, {"dst": 12, "start": "1ms"}]
    _on_ramp_run(tmp_path / "joined", joined, "4ms", [{"hosts": [1, 5]}, {"hosts": [2]}])
    _on_ramp_run(tmp_path / "together", joined[:1], "2ms")
    sweep = claims.Sweep.__new__(claims.Sweep)
    sweep.name, sweep.dir = "t", tmp_path
    sweep.points = pd.DataFrame({"dir": ["joined", "together"]})
    joined_run, together_run = sweep.points.iloc[0], sweep.points.iloc[1]
    assert sweep.metric(joined_run, "receiver_utilization") == pytest.approx(0.08)
    assert sweep.metric(joined_run, "join_drain_ms") == pytest.approx(2.0)  # 0.5 MB < 1 MB at 3 ms
    assert sweep.metric(together_run, "receiver_utilization") == pytest.approx(1.0)
    assert sweep.metric(joined_run, "incast_group_rct[1]") == pytest.approx(10.0)  # unfinished out
    assert sweep.metric(joined_run, "incast_group_rct[2]") == pytest.approx(30.0)
    assert sweep.columns("incast_group_rct[2]") == ["incast_group_rct[2]"]
    with pytest.raises(claims.ClaimsError, match="needs at least 3"):
        sweep.metric(joined_run, "incast_group_rct[3]")


def test_ibm_ecm_kinds():
    """The IBM talk's kinds: a trend over points for every variant, the point of a minimum,
    a threshold every variant reaches, and PAUSE against no PAUSE (close; higher)."""
    rows = []
    for seed, jitter in ((1, 0.0), (2, 2.0)):
        for point, ecm, e2cm in (("a", 50.0, 40.0), ("b", 30.0, 45.0), ("c", 10.0, 20.0)):
            rows.append(_run(point, "ecm", seed, rec=ecm + jitter, tp=100.0 + jitter))
            rows.append(_run(point, "e2cm", seed, rec=e2cm + jitter, tp=110.0 + jitter))
    sweeps = {"t": _sweep_of(rows)}
    trend = {"id": "t", "kind": "trend", "talk": "falls", "sweep": "t", "metric": "rec"}
    trend |= {"points": ["a", "b", "c"], "variants": ["ecm"]}
    row = claims.compute(trend, sweeps, {}, 0.25)
    assert (row.text, row.verdict) == ("ecm 51 / 31 / 11", "reproduced")
    both = claims.compute({**trend, "variants": ["ecm", "e2cm"]}, sweeps, {}, 0.25)
    assert both.verdict == "direction"  # e2cm rises from a to b, falls overall
    assert claims.compute({**trend, "talk": "rises"}, sweeps, {}, 0.25).verdict == "contradicted"

    low = {"id": "m", "kind": "minimum_at", "talk": "-", "sweep": "t", "metric": "rec"}
    low |= {"points": ["a", "b", "c"], "variant": "e2cm", "at": "c"}
    assert claims.compute(low, sweeps, {}, 0.25).verdict == "reproduced"
    assert claims.compute({**low, "at": "b"}, sweeps, {}, 0.25).verdict == "contradicted"

    above = {"id": "x", "kind": "all_above", "talk": "-", "sweep": "t", "metric": "rec"}
    above |= {"points": ["a", "b"], "variants": ["ecm", "e2cm"], "threshold": 31}
    row = claims.compute(above, sweeps, {}, 0.25)
    assert row.verdict == "reproduced" and row.value == 31.0
    assert claims.compute({**above, "threshold": 32}, sweeps, {}, 0.25).verdict == "contradicted"

    # (a, b) as (no PAUSE, PAUSE): tp 101 -> 101 (ecm), 111 -> 111 (e2cm); rec 51 -> 31
    pair = {"id": "p", "kind": "pause_close", "talk": "-", "sweep": "t", "metric": "tp"}
    pair |= {"points": ["a", "b"], "variants": ["ecm", "e2cm"], "limit": 0.25}
    assert claims.compute(pair, sweeps, {}, 0.25).verdict == "reproduced"
    far = claims.compute({**pair, "metric": "rec"}, sweeps, {}, 0.25)
    assert far.verdict == "contradicted" and far.text.startswith("at most -39 %")
    higher = {**pair, "kind": "pause_higher", "metric": "rec"}
    assert claims.compute(higher, sweeps, {}, 0.25).verdict == "contradicted"
    flipped = claims.compute({**higher, "points": ["b", "a"]}, sweeps, {}, 0.25)
    assert flipped.verdict == "direction"  # ecm higher with PAUSE, e2cm lower
    with pytest.raises(claims.ClaimsError, match="pairs"):
        claims.compute({**pair, "points": ["a", "b", "c"]}, sweeps, {}, 0.25)
