"""Edge pausing (Smart-Pause / On-Ramp) through the Python API: OWD samples,
per-host totals, the report section and the OWD plot."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import incast
from conftest import TINY_TOML
from incast.plots import plot_all
from incast.report import print_summary

# Two 100 KB flows into one 10 Gb/s port: the queue builds up, so OWD exceeds
# the 5 us threshold (the idle path's OWD is 2 x (1 us + 1.2 us) = 4.4 us for
# a 1500 B packet) and Smart-Pause fixed pauses.
EDGE_TOML = (
    TINY_TOML
    + """
[edge]
rule = { algorithm = "smart_pause_fixed", threshold = "5us", pause = "2us" }
owd_sample_every = 1
"""
)


def test_owd_samples_and_pause_totals():
    res = incast.run(EDGE_TOML)
    owd = res.owd
    assert len(owd) > 0
    # Perfect clocks: no reading below the idle path's one-way delay.
    base_us = 2 * (1.0 + 1500 * 8 / 10e9 * 1e6)
    assert owd["owd_us"].min() == pytest.approx(base_us, abs=1e-6)
    edge = res.summary["edge"]
    assert edge["rule"] == "smart_pause_fixed"
    assert edge["pauses"] > 0
    assert res.flows["edge_pauses"].sum() == edge["pauses"]
    hosts = res.hosts
    assert hosts.set_index("host").loc[[0, 1], "edge_pauses"].sum() == edge["pauses"]
    assert (res.flows["finished"] == 1).all()


def test_report_and_plot_show_edge_pausing(tmp_path):
    res = incast.run(EDGE_TOML)
    out = io.StringIO()
    print_summary(res, Console(file=out, width=120))
    text = out.getvalue()
    assert "Edge pausing" in text
    assert "smart_pause_fixed" in text
    paths = plot_all(res, tmp_path, [])
    assert tmp_path / "owd.png" in paths


def test_runs_without_edge_have_no_owd_plot(tmp_path):
    res = incast.run(TINY_TOML)
    assert len(res.owd) == 0
    notes: list = []
    paths = plot_all(res, tmp_path, notes)
    assert tmp_path / "owd.png" not in paths
    assert not any("owd" in n for n in notes)


def test_unknown_rule_is_a_scenario_error():
    with pytest.raises(incast.ScenarioError, match="on_ramp"):
        incast.run(TINY_TOML + '\n[edge]\nrule = "onramp"\n')
