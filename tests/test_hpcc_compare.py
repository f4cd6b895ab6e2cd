"""scenarios/hpcc/hpcc_compare.py: the statistics of one fct.txt and the flow-by-flow match of
two (docs/hpcc-interop.md), on small hand-made files whose answers are worked out below."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scenarios" / "hpcc" / "hpcc_compare.py"

# sip dip sport dport size start fct standalone
REFERENCE = """\
0b000101 0b000201 10000 100 5000 2000000000 10000 10000
0b000101 0b000301 10000 100 200000 2000001000 40000 20000
0b000401 0b000301 10000 100 300000 2000002000 60000 30000
0b000501 0b000601 10000 100 7000 2000003000 12000 12000
"""
# The first start 1 ns later (matched), the third 2 ns earlier (matched), the last 4 ns later
# (beyond the 3 ns tolerance: unmatched).
OTHER = """\
0b000101 0b000201 10000 100 5000 2000000001 10100 10000
0b000101 0b000301 10000 100 200000 2000001000 44000 20000
0b000401 0b000301 10000 100 300000 2000001998 72000 30000
0b000501 0b000601 10000 100 7000 2000003004 12000 12000
"""


def run(*args: str) -> dict:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_per_flow_matches_within_the_start_tolerance_and_ranks_receivers(tmp_path):
    (tmp_path / "ref.txt").write_text(REFERENCE)
    (tmp_path / "other.txt").write_text(OTHER)
    got = run("--per-flow", str(tmp_path / "ref.txt"), str(tmp_path / "other.txt"))
    assert got["matched"] == 3 and got["reference_flows"] == 4
    # Ratios 1.01, 1.1, 1.2: linear percentiles p5 = 1.01 + 0.1 * 0.09, p50 = 1.1,
    # p95 = 1.1 + 0.9 * 0.1.
    assert got["fct_ratio"] == {"p5": 1.019, "p50": 1.1, "p95": 1.19}
    # Only flows of 100 KB or more count per receiver: 0b000301 has two, mean (1.1 + 1.2) / 2.
    assert got["receivers_ge100KB"] == [{"dst": "0b000301", "mean_ratio": 1.15, "flows": 2}]


def test_one_run_statistics(tmp_path):
    (tmp_path / "fct.txt").write_text(REFERENCE)
    (tmp_path / "pfc.txt").write_text("100 7 1 2 1\n300 7 1 2 0\n")
    got = run(str(tmp_path / "fct.txt"), str(tmp_path / "pfc.txt"))
    assert got["fct"]["flows"] == 4
    assert got["fct"]["100KB_1MB"]["p50"] == 2.0  # both 2x their standalone FCT
    assert got["pfc"]["pauses"] == {"host": 0, "switch": 1}
    assert got["pfc"]["paused_us_total"] == 0.2


def test_a_wrong_call_prints_the_usage():
    done = subprocess.run([sys.executable, str(SCRIPT), "x"], capture_output=True, text=True)
    assert done.returncode == 1 and "--per-flow" in done.stderr
    assert "Traceback" not in done.stderr
