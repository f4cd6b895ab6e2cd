"""scenarios/tables.py: a reproduction's README tables come from its sweep."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import REPO, TINY_TOML, load_script
from incast.experiment import load_experiment
from incast.sweep import sweep


def _tables_module():
    return load_script(REPO / "scenarios" / "tables.py", "tables")


def test_tables_written_between_markers_and_checked(tmp_path):
    tables = _tables_module()
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    (tmp_path / "e.toml").write_text(
        'name = "tiny_study"\nbase = "tiny.toml"\nseeds = [1, 2]\n'
        '[variants.dctcp]\n[variants.newreno]\ntransport.cc = "newreno"\n'
        '[[compare]]\nbaseline = "newreno"\nmetric = "slowdown"\nstats = ["mean"]\n'
    )
    out = tmp_path / "tiny_study"
    sweep(load_experiment(tmp_path / "e.toml"), out, jobs=1, plots=False)
    readme = tmp_path / "README.md"
    readme.write_text("# Study\n\nHand-written text.\n")
    write = ["--readme", str(readme), "--write", "--experiment", str(tmp_path / "e.toml")]
    # By default the block is printed, and the README is left alone.
    assert tables.main(["smart_pause", str(out), "--readme", str(readme)]) == 0
    assert readme.read_text() == "# Study\n\nHand-written text.\n"
    assert tables.main(["smart_pause", str(out), *write]) == 0
    text = readme.read_text()
    assert text.startswith("# Study\n\nHand-written text.\n")
    assert "<!-- tables: tiny_study -->" in text and "<!-- /tables: tiny_study -->" in text
    assert "| point | variant | seeds | slowdown mean |" in text
    assert "| point | dctcp | 1,2 |" in text
    assert "slowdown_vs_newreno" in text
    # Up to date: --check passes; a hand edit inside the block makes it fail.
    assert tables.main(["smart_pause", str(out), "--readme", str(readme), "--check"]) == 0
    readme.write_text(text.replace("| point | dctcp | 1,2 |", "| point | dctcp | 1 |"))
    assert tables.main(["smart_pause", str(out), "--readme", str(readme), "--check"]) == 1
    # Writing again replaces the block, it does not add a second one.
    assert tables.main(["smart_pause", str(out), *write]) == 0
    assert readme.read_text().count("<!-- tables: tiny_study -->") == 1


def test_tables_refuse_a_sweep_made_with_other_settings(tmp_path):
    tables = _tables_module()
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    (tmp_path / "e.toml").write_text(
        'name = "tiny_study"\nbase = "tiny.toml"\nseeds = [1]\n[variants.dctcp]\n'
    )
    out = tmp_path / "tiny_study"
    sweep(
        load_experiment(tmp_path / "e.toml", overrides=[("duration", "1ms")]),
        out,
        jobs=1,
        plots=False,
    )
    readme = tmp_path / "README.md"
    readme.write_text("# Study\n")
    write = ["--readme", str(readme), "--write", "--experiment", str(tmp_path / "e.toml")]
    with pytest.raises(SystemExit, match="not made with the settings of"):
        tables.main(["smart_pause", str(out), *write])
    assert readme.read_text() == "# Study\n"


def test_six_rack_utilization_is_over_the_arrival_window(tmp_path):
    """The FSW-to-worker utilization counts the bytes sent within the window in which traffic
    was offered (the scenario's `duration`), never the backlog drained after it: overloaded
    (reads at 23.75 Gb/s per worker, cross traffic 30 %: 225 of 200 Gb/s offered per worker
    rack) it stays at most 1, where the whole run's bytes over the window read above 1. The
    only excess allowed: a port counts a packet when its transmission starts, so at most one
    1,500 B packet per port beyond the window's end."""
    tables = _tables_module()
    experiment = load_experiment(
        REPO / "scenarios" / "netronome_fb" / "six_rack_experiment.toml",
        seeds=[1],
        overrides=[("workload.incast.0.load", 0.95), ("workload.poisson.0.load", 0.3)],
    )
    out = tmp_path / "six_rack"
    assert sweep(experiment, out, jobs=1, plots=False, only=["util70/cubic/*"]).complete
    run = next(out.glob("**/scenario.json")).parent
    scenario = json.loads((run / "scenario.json").read_text())
    util = tables._six_rack_run(run, scenario)["util"]
    one_packet = 1500 * 8 / (50e9 * 20e-3)
    assert 50 < util <= 100 * (1 + one_packet)
    # The whole run's bytes over the window: what the figure was, above 1 in overload.
    ports = pd.read_parquet(run / "ports.parquet")
    hosts = 48
    down = ports[(ports["node"] >= hosts + 6) & (ports["peer"] >= hosts + 3)]
    down = down[down["peer"] < hosts + 6]
    assert (down["tx_bytes"] * 8 / (down["rate_bps"] * 20e-3)).mean() > 1.0


def test_window_utilization_reads_the_tick_at_the_window_end(tmp_path):
    """Closed form on a made-up series: two 10 Gb/s ports, ticks every 1 ms; at 2 ms (the
    window's end) they have sent 1.25 MB (half of 2 ms x 10 Gb/s) and 2.5 MB (all of it);
    later bytes do not count."""
    tables = _tables_module()
    series = pd.DataFrame(
        {
            "time_ps": [0, 0, 10**9, 10**9, 2 * 10**9, 2 * 10**9, 3 * 10**9, 3 * 10**9],
            "node": [5] * 8,
            "port": [0, 1] * 4,
            "bytes": [0] * 8,
            "tx_bytes": [0, 0, 600_000, 1_250_000, 1_250_000, 2_500_000, 9_000_000, 9_000_000],
        }
    )
    series.to_parquet(tmp_path / "queues.parquet")
    links = pd.DataFrame({"node": [5, 5], "port": [0, 1], "rate_bps": [10**10, 10**10]})
    assert tables.window_utilization(tmp_path, links, 2.5e-3) == pytest.approx(0.75)
    with pytest.raises(SystemExit, match="queue_ports"):
        tables.window_utilization(tmp_path, links.assign(port=[0, 7]), 2.5e-3)
