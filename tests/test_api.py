"""The Python API end to end, against the real core."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import incast
from conftest import POISSON_TOML, TINY_DICT, TINY_TOML, UNKNOWN_KEY_TOML, file_bytes
from incast.results import TABLES


def test_run_tiny_finishes_both_flows():
    res = incast.run(TINY_TOML)
    assert isinstance(res, incast.Results)
    flows = res.flows
    assert len(flows) == 2
    assert (flows["finished"] == 1).all()
    assert (flows["slowdown"] >= 1.0).all()
    assert (flows["size_bytes"] == 100_000).all()
    assert (flows["fct_ps"] >= flows["ideal_fct_ps"]).all()
    np.testing.assert_allclose(flows["fct_us"], flows["fct_ps"] / 1e6)
    assert res.summary["scenario"] == "tiny"
    assert res.summary["seed"] == 1
    assert res.summary["flows"]["finished"] == 2
    assert res.stats["events"] > 0


def test_results_tables_and_names():
    res = incast.run(TINY_TOML)
    for name in TABLES:
        assert isinstance(getattr(res, name), pd.DataFrame)
    assert len(res.node_names) >= 5  # 4 hosts and a switch
    for name in ("counters", "ports"):
        df = getattr(res, name)
        assert len(df) > 0
        assert "node_name" in df.columns
        assert set(df["node_name"]) <= set(res.node_names)
    ports = res.ports
    assert ((ports["utilization"] >= 0) & (ports["utilization"] <= 1.0 + 1e-9)).all()
    assert ports["tx_bytes"].sum() > 0


def test_seed_override_is_reported():
    res = incast.run(TINY_TOML, seed=42)
    assert res.summary["seed"] == 42


def test_parquet_is_byte_identical_across_runs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    incast.run(TINY_TOML).to_parquet(a)
    incast.run(TINY_TOML).to_parquet(b)
    files = file_bytes(a)
    assert set(files) == {f"{t}.parquet" for t in TABLES} | {"summary.json"}
    assert files == file_bytes(b)
    summary = json.loads((a / "summary.json").read_text())
    assert summary["flows"]["finished"] == 2


def test_poisson_seed_changes_flows(tmp_path):
    runs = {}
    for label, seed in (("s1", 1), ("s1again", 1), ("s2", 2)):
        res = incast.run(POISSON_TOML, seed=seed)
        assert len(res.flows) > 0
        res.to_parquet(tmp_path / label)
        runs[label] = (tmp_path / label / "flows.parquet").read_bytes()
    assert runs["s1"] == runs["s1again"]
    assert runs["s1"] != runs["s2"]


def test_dict_input_matches_toml():
    from_toml = incast.run(TINY_TOML)
    from_dict = incast.run(TINY_DICT)
    pd.testing.assert_frame_equal(from_toml.flows, from_dict.flows)
    assert from_toml.summary == from_dict.summary


def test_path_input(tiny_file):
    by_path = incast.run(tiny_file)
    by_str = incast.run(str(tiny_file))
    pd.testing.assert_frame_equal(by_path.flows, by_str.flows)


def test_validate_returns_normalized_dict():
    normalized = incast.validate(TINY_TOML)
    assert normalized["name"] == "tiny"
    assert normalized["seed"] == 1
    # The normalized form is itself a valid scenario.
    assert incast.validate(normalized)["name"] == "tiny"


def test_load_scenario(tiny_file):
    scenario = incast.load_scenario(tiny_file)
    assert scenario["name"] == "tiny"
    scenario["name"] = "renamed"
    assert incast.run(scenario).summary["scenario"] == "renamed"


def test_unknown_key_is_a_scenario_error():
    with pytest.raises(incast.ScenarioError) as info:
        incast.validate(UNKNOWN_KEY_TOML)
    assert "bogus_knob" in str(info.value)
    assert isinstance(info.value, ValueError)
    with pytest.raises(incast.ScenarioError):
        incast.run(UNKNOWN_KEY_TOML)


def test_bad_dict_is_a_scenario_error():
    bad = dict(TINY_DICT, topology=dict(TINY_DICT["topology"], link_rate="fast"))
    with pytest.raises(incast.ScenarioError):
        incast.validate(bad)


def test_schema_is_json_schema():
    schema = incast.schema()
    assert "properties" in schema
    assert "topology" in schema["properties"]


def test_low_level_simulation():
    sim = incast.simulation(TINY_TOML)
    assert sim.name == "tiny"
    p = sim.progress()
    assert set(p) >= {"now_ps", "horizon_ps", "fraction", "active_flows", "finished_flows"}
    steps = 0
    while not sim.advance(1_000):
        steps += 1
        assert steps < 1_000_000
    p = sim.progress()
    assert p["finished_flows"] == 2
    assert math.isclose(p["fraction"], 1.0) or p["fraction"] <= 1.0
    raw = sim.finish()
    assert set(raw) >= {"flows", "incasts", "counters", "ports", "queues", "node_names"}
    dtype, data = raw["flows"]["flow_id"]
    assert dtype == "<u8" and len(data) == 16
    assert json.loads(raw["summary"])["scenario"] == "tiny"
    with pytest.raises(RuntimeError):
        sim.finish()
    with pytest.raises(RuntimeError):
        sim.advance(10)


def test_flows_name_their_congestion_control():
    """scenarios/dctcp_beside_cubic.toml: one CUBIC bulk flow beside DCTCP flows."""
    scenario = Path(__file__).parent.parent / "scenarios" / "dctcp_beside_cubic.toml"
    r = incast.run(scenario)
    assert r.summary["congestion_controls"] == ["dctcp", "cubic"]
    assert list(r.flows["cc"].cat.categories) == ["dctcp", "cubic"]
    cubic = r.flows["cc"] == "cubic"
    assert cubic.sum() == 1 and (r.flows.loc[cubic, "src"] == 0).all()
    assert set(r.summary["by_cc"]) == {"dctcp", "cubic"}


CM_TOML = """
name = "cm"
duration = "6ms"
stop = "6ms"
cm = "ecm"
[topology]
kind = "single_switch"
hosts = 8
link_rate = "10Gbps"
link_delay = "500ns"
[switch.input_buffer]
[nic]
model = "adapter"
[[workload.onoff]]
load = 0.85
mean_burst = "12us"
[[workload.hotspot]]
host = 0
service_rate = 0.1
start = "1ms"
[metrics]
queue_ports = "switch"
queue_sample_interval = "100us"
"""


def test_congestion_management_tables():
    """An ECM run with the adapter NIC: the cm table over time, the queue series'
    cumulative tx_bytes (throughput), and the summary's cm block."""
    r = incast.run(CM_TOML)
    assert "cm" in r.table_names
    cm = r.cm
    assert len(cm) == 61 and cm["time_us"].iloc[-1] == 6000.0
    assert cm["feedback_sent"].is_monotonic_increasing and cm["feedback_sent"].iloc[-1] > 0
    assert cm["feedback_sent"].iloc[-1] <= r.summary["cm"]["feedback_sent"]
    assert (cm["hot_rx_bytes"] <= 150_000).all() and cm["hot_rx_bytes"].max() > 100_000
    for _, port in r.queues.groupby(["node", "port"]):
        assert port["tx_bytes"].is_monotonic_increasing
    hot = r.queues[(r.queues["node"] == 8) & (r.queues["port"] == 0)]
    late = hot[hot["time_us"] >= 2000]
    gbps = (
        (late["tx_bytes"].iloc[-1] - late["tx_bytes"].iloc[0])
        * 8
        / ((late["time_us"].iloc[-1] - late["time_us"].iloc[0]) * 1e3)
    )
    assert 0.8 < gbps < 1.2, gbps  # the hot host drains at 10 % of 10 Gb/s
    assert r.summary["cm"]["scheme"] == "ecm"
    assert r.summary["cm"]["receive_overflow_frames"] == 0


def test_congestion_management_throughput_plot(tmp_path):
    """A run with the adapter NIC gets throughput.png (aggregate and hot-port
    throughput, hot queue); a run without congestion management does not."""
    from incast.plots import plot_all

    paths = plot_all(incast.run(CM_TOML), tmp_path / "cm", [])
    assert tmp_path / "cm" / "throughput.png" in paths
    assert (tmp_path / "cm" / "throughput.png").read_bytes()[:4] == b"\x89PNG"
    plain = plot_all(incast.run(TINY_TOML), tmp_path / "tiny", [])
    assert all(p.name != "throughput.png" for p in plain)
