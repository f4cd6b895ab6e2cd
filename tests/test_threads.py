"""One run on several threads (`incast.run(threads=N)`, `incast run --threads N`):
node order, and the same tables for every thread count (issue 47)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

import incast
from incast.cli import cli
from incast.results import TABLES

FAT_TREE = """\
name = "threads"
seed = 2
duration = "400us"
[topology]
kind = "fat_tree"
k = 4
host_rate = "100Gbps"
fabric_rate = "100Gbps"
[switch]
buffer = "2MB"
ecn = { kind = "step", k = "60KB" }
[transport]
cc = "dctcp"
rto_min = "200us"
[[workload.poisson]]
load = 0.6
cdf = "websearch"
[metrics]
queue_ports = "none"
"""

NODE_ORDER = FAT_TREE + '[timing]\nties = "node"\n'

# The IBM talk's congestion management on the same fat-tree: on/off sources into a
# hotspot, ECM's feedback to the sources across the network.
ECM = """\
name = "ecm_threads"
seed = 2
duration = "1ms"
stop = "1ms"
cm = "ecm"
[topology]
kind = "fat_tree"
k = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[switch]
ecn = { kind = "off" }
[nic]
model = "adapter"
[[workload.onoff]]
load = 0.8
frame = 1500
[[workload.hotspot]]
host = 0
service_rate = 0.1
start = "100us"
[metrics]
queue_ports = "none"
queue_sample_interval = "20us"
"""


def _same_tables(a: incast.Results, b: incast.Results) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), obj=name)
    assert a.summary["flows"] == b.summary["flows"]


def test_threads_give_the_one_thread_node_order_tables():
    one = incast.run(NODE_ORDER)
    assert len(one.flows) > 20
    for threads in (1, 2, 3):
        _same_tables(incast.run(FAT_TREE, threads=threads), one)


def test_threads_sample_queues_as_one_thread_does():
    """The default queue selection (`top`) on threads: each partition samples its own ports."""
    sampled = FAT_TREE.replace('queue_ports = "none"', 'queue_ports = "top"')
    one = incast.run(sampled + '[timing]\nties = "node"\n')
    assert len(one.queues) > 100
    _same_tables(incast.run(sampled, threads=2), one)


def test_congestion_management_runs_on_threads():
    """ECM's feedback crosses partitions as frames; the `cm` series add up per tick."""
    one = incast.run(ECM + '[timing]\nties = "node"\n')
    assert one.summary["cm"]["feedback_received"] > 5
    assert one.cm["limited_flows"].max() > 5
    _same_tables(incast.run(ECM, threads=2), one)  # `cm` among the tables


def test_the_transmit_queue_nic_runs_on_threads():
    """A NIC model whose state is per NIC merges it from each NIC's partition."""
    queues = '[nic]\nmodel = "queues"\n[nic.queues]\nlimit = "32KB"\n'
    one = incast.run(NODE_ORDER + queues)
    assert one.summary["nic_queues"]["queues"]["shared"]["max_bytes"] > 16_000
    _same_tables(incast.run(FAT_TREE + queues, threads=2), one)


def test_cli_runs_on_threads_in_node_order(tmp_path):
    scenario = tmp_path / "threads.toml"
    scenario.write_text(FAT_TREE)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["run", str(scenario), "--threads", "2", "--out", str(out), "--no-plots", "-q"]
    )
    assert result.exit_code == 0, result.output
    written = json.loads((out / "scenario.json").read_text())
    assert written["timing"]["ties"] == "node"
    flows = pd.read_parquet(out / "flows.parquet")
    pd.testing.assert_frame_equal(flows, incast.run(NODE_ORDER).flows, check_like=True)
    # A thread count the scenario cannot take is said plainly, without a traceback.
    refused = tmp_path / "refused.toml"
    refused.write_text(FAT_TREE + "[timing]\nthreads = 2\n")
    result = CliRunner().invoke(cli, ["run", str(refused), "--out", str(tmp_path / "o2"), "-q"])
    assert result.exit_code != 0
    assert "ties" in result.output
    assert "Traceback" not in result.output


def test_the_scenario_key_runs_on_threads_unless_overridden():
    """`[timing] threads = N` (with `ties = "node"`) runs on N threads; the tables
    are node order's; without `ties = "node"` the key is refused, saying so."""
    keyed = NODE_ORDER + "threads = 2\n"
    _same_tables(incast.run(keyed), incast.run(NODE_ORDER))
    with pytest.raises(ValueError, match="add ties"):
        incast.run(FAT_TREE + "[timing]\nthreads = 2\n")
