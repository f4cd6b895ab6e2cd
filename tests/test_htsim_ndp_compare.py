"""scenarios/htsim_ndp/compare.py: incast's NDP and trimming beside htsim (docs/htsim-ndp.md).

Runs incast on the cheap case (the 64-to-1 incast of 2 MB flows) and checks it against htsim's
stored output with the issue's tolerance (10 %), and that the doc states the rows it gives; the
permutation runs under `compare.py --check`. htsim itself is not needed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import load_script

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scenarios" / "htsim_ndp" / "compare.py"


@pytest.fixture(scope="module")
def compare():
    return load_script(SCRIPT, "htsim_ndp_compare")


@pytest.fixture(scope="module")
def sides(compare):
    return compare.incast_side("incast"), compare.htsim_side("incast")


def test_htsim_side_reads_its_stored_output(compare):
    perm, incast = compare.htsim_side("perm"), compare.htsim_side("incast")
    assert (perm["flows"], incast["flows"]) == (128, 64)
    assert (perm["rtx"], incast["rtx"]) == (0, 934)
    assert abs(incast["max"] - 10468.1) < 1e-9


def test_the_incast_is_within_the_issue_tolerance(compare, sides):
    ours, theirs = sides
    assert compare.problems("incast", ours, theirs) == []
    assert ours["timeouts"] == 0
    # Each trimmed packet is sent again once, after its NACK.
    assert ours["trimmed"] == ours["rtx"]


def test_the_doc_states_these_rows(compare, sides):
    ours, theirs = sides
    doc = compare.DOC.read_text()
    for row in compare.rows("incast", ours, theirs):
        assert "| " + " | ".join(row) + " |" in doc, row


def test_htsim_without_bench_is_a_clear_error(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--htsim", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "--bench" in done.stderr and "Traceback" not in done.stderr
