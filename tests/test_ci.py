"""IEEE 802.1Qcz congestion isolation through the Python API: the summary's ci
block, per-flow isolations, the report section and scenario validation."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import incast
from incast.report import print_summary

# Head-of-line blocking across two switches: four senders (h1..h4) incast into
# r1 while a victim (v) sends to r2 through the same s0 -> s1 link and the same
# lossless class. Without isolation, PFC pauses for r1's congestion would stop
# the victim too; with [switch.ci] the incast flows move to a congested-flow
# queue and only that queue is paused.
_BASE_TOML = """\
seed = 11
stop = "600us"
[topology]
kind = "explicit"
hosts = ["v", "h1", "h2", "h3", "h4", "r1", "r2"]
switches = ["s0", "s1"]
links = [
  { a = "v", b = "s0", rate = "100Gbps" },
  { a = "h1", b = "s0", rate = "100Gbps" },
  { a = "h2", b = "s0", rate = "100Gbps" },
  { a = "h3", b = "s0", rate = "100Gbps" },
  { a = "h4", b = "s0", rate = "100Gbps" },
  { a = "s0", b = "s1", rate = "400Gbps" },
  { a = "r1", b = "s1", rate = "100Gbps" },
  { a = "r2", b = "s1", rate = "100Gbps" },
]
[switch]
buffer = "8MB"
[switch.pfc]
classes = [2, 3]
[switch.ci]
{ci}
[rdma]
cc = "none"
[[workload.flows]]
src = "v"
dst = "r2"
size = "1GB"
class = 3
"""

_INCAST_FLOWS = "".join(
    f'[[workload.flows]]\nsrc = "h{i}"\ndst = "r1"\nsize = "1GB"\nclass = 3\n' for i in range(1, 5)
)


def ci_toml(ci: str = "") -> str:
    """The HOL-blocking scenario with `ci` as the body of [switch.ci]."""
    return _BASE_TOML.replace("{ci}\n", ci + "\n" if ci else "") + _INCAST_FLOWS


CI_TOML = ci_toml()


@pytest.fixture(scope="module")
def ci_results() -> incast.Results:
    return incast.run(CI_TOML)


def test_summary_ci_block(ci_results):
    s = ci_results.summary
    ci = s["ci"]
    assert ci["isolations_detected"] == 4
    assert ci["nic_isolations"] == 4
    # Only the congested-flow queue is paused: the victim's queue never is.
    assert ci["pause_frames_ncq"] == 0
    assert ci["pause_frames_cfq"] > 0
    assert ci["pause_frames_cfq_share"] == pytest.approx(1.0)
    assert ci["table_full"] == 0
    assert ci["cip_gave_up"] == 0
    assert s["out_of_order_arrivals"] == 0
    assert "cnps" in s


def test_flows_ci_isolations(ci_results):
    flows = ci_results.flows
    assert {"ci_isolations", "cnps"} <= set(flows.columns)
    assert len(flows) == 5
    victim = flows["src"] == 0  # host "v" is host index 0
    assert victim.sum() == 1
    assert (flows.loc[victim, "ci_isolations"] == 0).all()
    assert (flows.loc[~victim, "ci_isolations"] > 0).all()
    assert ci_results.summary["ci"]["flows_isolated"] == 4


def test_report_shows_congestion_isolation(ci_results):
    out = io.StringIO()
    print_summary(ci_results, Console(file=out, width=120))
    text = out.getvalue()
    assert "Congestion isolation" in text
    assert "PAUSE frames sent: NCQ / CFQ" in text
    assert "large flows (>= 100 KB) isolated" in text
    # The flows are long-lived on purpose: the one warning says that `stop` cut them.
    warnings = [line for line in text.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "did not finish" in warnings[0], warnings
    # The ci block has its own section rather than the catch-all one.
    assert "ci.cips_sent" not in text


def test_report_warns_on_full_table_and_abandoned_cips():
    class Fake:
        summary = {
            "scenario": "fake",
            "seed": 1,
            "ci": {"table_full": 3, "cip_gave_up": 2, "large_flow_bytes": 100_000},
        }
        stats: dict = {}

    out = io.StringIO()
    print_summary(Fake(), Console(file=out, width=200))
    text = out.getvalue()
    assert "congested-flow table full: raise switch.ci.max_flows" in text
    assert "2 CIPs given up" in text


def test_runs_without_ci_have_no_ci_section():
    res = incast.run(_BASE_TOML.replace("[switch.ci]\n{ci}\n", "") + _INCAST_FLOWS)
    assert "ci" not in res.summary
    assert (res.flows["ci_isolations"] == 0).all()
    out = io.StringIO()
    print_summary(res, Console(file=out, width=120))
    assert "Congestion isolation" not in out.getvalue()


def test_bad_cfq_class_is_a_scenario_error():
    with pytest.raises(incast.ScenarioError, match=r"switch\.ci\.queues\[0\]\.cfq\[0\]"):
        incast.validate(ci_toml("queues = [{ class = 3, cfq = [4] }]"))


def test_unknown_ci_key_is_a_scenario_error():
    with pytest.raises(incast.ScenarioError, match=r"switch\.ci\.tresh"):
        incast.validate(ci_toml('tresh = "1KB"'))
