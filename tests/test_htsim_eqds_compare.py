"""scenarios/htsim_eqds/compare.py: incast's EQDS beside htsim (docs/htsim-eqds.md).

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
SCRIPT = REPO / "scenarios" / "htsim_eqds" / "compare.py"


@pytest.fixture(scope="module")
def compare():
    return load_script(SCRIPT, "htsim_eqds_compare")


@pytest.fixture(scope="module")
def sides(compare):
    return compare.incast_side("incast"), compare.htsim_side("incast")


def test_htsim_side_reads_its_stored_output(compare):
    perm, incast = compare.htsim_side("perm"), compare.htsim_side("incast")
    assert (perm["flows"], incast["flows"]) == (128, 64)
    assert (perm["rtx"], incast["rtx"]) == (1589, 2967)
    assert (perm["rts"], incast["rts"]) == (0, 0)
    assert abs(perm["max"] - 212.385) < 1e-9
    assert abs(incast["max"] - 10564.5) < 0.1


def test_the_incast_is_within_the_issue_tolerance(compare, sides):
    ours, theirs = sides
    assert compare.problems("incast", ours, theirs) == []
    assert ours["timeouts"] == 0
    # Each trimmed packet is sent again once, after its NACK.
    assert ours["trimmed"] == ours["rtx"]


def test_only_the_permutation_trim_count_has_a_wider_bound(compare):
    assert set(compare.WIDER) == {("perm", "trimmed"), ("perm", "rtx")}
    # The wider bound still fails a count far off htsim's.
    ours = {"unfinished": 0, "flows": 128, "p50": 201.0, "p99": 211.9, "max": 212.4}
    theirs = {"flows": 128, "p50": 201.0, "p99": 211.9, "max": 212.4, "trimmed": 1589, "rtx": 1589}
    assert compare.problems("perm", {**ours, "trimmed": 1188, "rtx": 1188}, theirs) == []
    bad = compare.problems("perm", {**ours, "trimmed": 238, "rtx": 238}, theirs)
    assert len(bad) == 2


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
