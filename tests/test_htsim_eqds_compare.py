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


def test_htsim_seeds_are_stored_and_seed_13_is_the_stored_run(compare):
    seeds = compare.htsim_seeds()
    assert [r["seed"] for r in seeds] == list(range(1, compare.SEEDS + 1))
    # htsim_eqds's default seed is 13: its line is the stored run's.
    perm = compare.htsim_side("perm")
    assert seeds[12]["rtx"] == perm["rtx"] == 1589
    assert abs(seeds[12]["max"] - perm["max"]) < 1e-3
    assert compare.htsim_seed_range() == (1015, 1589)


def test_only_the_permutation_trim_count_is_held_to_htsim_seed_range(compare):
    assert compare.IN_SEED_RANGE == {("perm", "trimmed"), ("perm", "rtx")}
    ours = {"unfinished": 0, "flows": 128, "p50": 201.0, "p99": 211.9, "max": 212.4}
    theirs = {"flows": 128, "p50": 201.0, "p99": 211.9, "max": 212.4, "trimmed": 1589, "rtx": 1589}
    assert compare.problems("perm", {**ours, "trimmed": 1210, "rtx": 1210}, theirs) == []
    # Below htsim's lowest seed (1015) or above its highest (1589): out.
    for count in (238, 1014, 1590):
        bad = compare.problems("perm", {**ours, "trimmed": count, "rtx": count}, theirs)
        assert len(bad) == 2, count
    # The incast's counts keep the issue's 10 %.
    bad = compare.problems("incast", {**ours, "trimmed": 1210, "rtx": 1210}, theirs)
    assert len(bad) == 2


def test_the_means_over_seeds_are_held_to_the_issue_tolerance(compare):
    theirs = compare.means(compare.htsim_seeds())
    assert compare.spread_problems([], dict(theirs), theirs) == []
    low = {**theirs, "trimmed": theirs["trimmed"] * 0.89}
    assert len(compare.spread_problems([], low, theirs)) == 1
    runs = [{"unfinished": 0, "timeouts": 1}]
    assert len(compare.spread_problems(runs, dict(theirs), theirs)) == 1


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
