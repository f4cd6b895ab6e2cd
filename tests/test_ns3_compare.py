"""scenarios/ns3_dumbbell/compare.py: incast's side of the ns-3 comparison (docs/ns3-tcp.md).

Runs incast on the cheapest dumbbell case (BBR, 10 Gb/s senders, no SACK: two runs of 200
and 100 ms) and checks it against ns-3's recorded CSV with the issue's tolerances, which the
doc states as met for this case; then `compare.py --check` on every case, so that no table of
the doc drifts from what incast gives now. ns-3 itself is not needed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import load_script

REPO = Path(__file__).resolve().parent.parent
CASE = "bbr_10g_nosack"


@pytest.fixture(scope="module")
def compare():
    return load_script(REPO / "scenarios" / "ns3_dumbbell" / "compare.py", "ns3_compare")


@pytest.fixture(scope="module")
def sides(compare):
    return compare.incast_dumbbell(CASE), compare.ns3_dumbbell(CASE)


def test_every_scenario_sets_its_recovery(compare):
    for case in compare.DUMBBELLS:
        text = compare.dumbbell_toml(case)
        want = compare.RECOVERY[case.split("_")[2]]
        assert text.count("\nrecovery = ") == 1 and f'\nrecovery = "{want}"' in text, case
    for recovery in ("newreno", "sack"):
        text = (compare.NS3_DIR / f"websearch32_cubic_{recovery}.toml").read_text()
        assert f'\nrecovery = "{recovery}"' in text


def test_the_issue_figures_hold_for_bbr_without_sack(compare, sides):
    ours, theirs = sides
    assert abs(compare.rel(sum(ours["goodput"]), sum(theirs["goodput"]))) <= compare.REL_TOL
    assert abs(compare.rel(ours["utilization"], theirs["utilization"])) <= compare.REL_TOL
    assert ours["drops"] == theirs["drops"] == 0
    assert sum(ours["retransmits"]) == sum(theirs["retransmits"]) == 0
    ratio = ours["queue_mean"] / theirs["queue_mean"]
    assert 1 / compare.BBR_QUEUE_FACTOR <= ratio <= compare.BBR_QUEUE_FACTOR


def test_the_doc_states_this_table(compare, sides):
    ours, theirs = sides
    rows = compare.dumbbell_rows(CASE, ours, theirs)
    table = "\n".join("| " + " | ".join(row) + " |" for row in rows)
    assert table in compare.DOC.read_text()


def test_every_table_of_the_doc_is_current():
    """`compare.py --check` re-runs incast on every case (a few seconds) against the doc."""
    script = REPO / "scenarios" / "ns3_dumbbell" / "compare.py"
    long_window = ["--case", "cubic_10g_sack", "--case", "cubic_40g_sack", "--stop-ms", "1000"]
    for extra in ([], long_window):
        done = subprocess.run(
            [sys.executable, str(script), "--check", *extra], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert "every table matches" in done.stdout
