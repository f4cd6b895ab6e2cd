"""The bundled examples do what their descriptions and the README say."""

from __future__ import annotations

import re

import incast
from conftest import INCAST_SCENARIO, REPO


def _incast_goodput_gbps(res: incast.Results) -> float:
    """Incast goodput: the bits all incasts delivered over their total completion time."""
    inc = res.incasts
    done = inc[inc["finished"] == 1]
    bits = float((done["fan_in"] * done["bytes_per_sender"] * 8).sum())
    return bits / (float(done["completion_ps"].astype(float).sum()) / 1e12) / 1e9


def test_incast_single_switch_shows_what_it_claims():
    """DCTCP: no timeouts; NewReno (--set transport.cc=newreno): slower incasts, and with
    SACK recovery without RACK-TLP (--set transport.recovery=sack) timeouts and the incast
    goodput collapses.

    Measured on seeds 1-3 (scenario description): DCTCP 0 timeouts, incasts done in
    2.4-3.1 ms on average (5.3-6.8 Gb/s of incast goodput); NewReno with the default
    recovery (SACK with RACK-TLP) 3-7 timeouts, 3.6-5.3 ms (1.4-1.7x DCTCP's), p99 2.9-4.7x;
    NewReno with `recovery = "sack"` 24-51 timeouts, 7.4-7.8 ms (2.1-2.2 Gb/s). Required on
    seed 1 with "sack": DCTCP none, NewReno at least 10 timeouts, and NewReno's mean incast
    completion at least 1.8x DCTCP's (measured 3.1x): a margin that still fails if the two
    behave alike. With the default: fewer than half SACK's timeouts (measured 6 against 51:
    TLP and RACK repair lost tails and lost retransmissions without the RTO), yet a p99 at
    least 2x DCTCP's (measured 4.7x: the full queues remain), so the check fails if RACK-TLP
    is not the default or stops repairing tails, or if NewReno's queues stop costing.
    """
    dctcp = incast.run(INCAST_SCENARIO)
    scenario = incast.load_scenario(INCAST_SCENARIO)
    scenario["transport"]["cc"] = "newreno"
    rack = incast.run(scenario)
    scenario["transport"]["recovery"] = "sack"
    newreno = incast.run(scenario)
    assert dctcp.summary["timeouts"] == 0
    assert newreno.summary["timeouts"] >= 10
    d, n = (r.summary["incasts"]["completion_us"]["mean"] for r in (dctcp, newreno))
    assert n >= 1.8 * d, (d, n)
    assert _incast_goodput_gbps(dctcp) > 5.0
    assert _incast_goodput_gbps(newreno) < 0.6 * _incast_goodput_gbps(dctcp)
    assert 0 < 2 * rack.summary["timeouts"] < newreno.summary["timeouts"]
    d99, r99 = (r.summary["incasts"]["completion_us"]["p99"] for r in (dctcp, rack))
    assert r99 >= 2.0 * d99, (d99, r99)
    # The description states the numbers it shows.
    text = INCAST_SCENARIO.read_text()
    assert "no timeouts" in text and "newreno" in text and "recovery=sack" in text


def test_readme_roce_example_is_lossless():
    readme = (REPO / "README.md").read_text()
    block = re.search(r'```toml\n(name = "roce_incast".*?)```', readme, re.DOTALL)
    assert block, "the README's [rdma] + [switch.pfc] example"
    res = incast.run(block.group(1))
    assert res.summary["pfc"]["pause_frames"] > 0
    assert res.summary["drops"]["packets"] == 0
    assert res.summary["flows"]["unfinished"] == 0
