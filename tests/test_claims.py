"""scenarios/claims.py: a reproduction's claims are computed from runs, never typed in."""

from __future__ import annotations

import importlib.util
import sys

import pandas as pd
import pytest

from conftest import REPO
from incast.experiment import load_experiment
from incast.sweep import sweep

#: Talks whose claims are computed by scenarios/claims.py.
TALKS = ["smart_pause"]


def _claims_module():
    spec = importlib.util.spec_from_file_location("claims", REPO / "scenarios" / "claims.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["claims"] = module
    spec.loader.exec_module(module)
    return module


claims = _claims_module()


@pytest.mark.parametrize("talk", TALKS)
def test_small_rows_are_current(talk, tmp_path):
    """The small experiment, seed 1, gives exactly the committed claims_small.csv: a model,
    metric or claims.toml change that moves a claim makes this fail until the rows are
    recomputed (`python scenarios/claims.py TALK --sweep small=DIR --small-csv
    scenarios/TALK/claims_small.csv` after `incast sweep scenarios/TALK/small.toml --seeds 1`)."""
    out = tmp_path / "small"
    experiment = load_experiment(REPO / "scenarios" / talk / "small.toml", seeds=[1])
    outcome = sweep(experiment, out, jobs=2, plots=False)
    assert outcome.complete
    fresh = tmp_path / "claims_small.csv"
    assert claims.main([talk, "--sweep", f"small={out}", "--small-csv", str(fresh)]) == 0
    committed = pd.read_csv(REPO / "scenarios" / talk / "claims_small.csv", keep_default_na=False)
    got = pd.read_csv(fresh, keep_default_na=False)
    stale = [
        f"{row.id}: committed {row.incast} ({row.verdict}), now {new.incast} ({new.verdict})"
        for row, new in zip(committed.itertuples(), got.itertuples())
        if (row.id, row.incast, row.verdict) != (new.id, new.incast, new.verdict)
    ]
    assert list(committed["id"]) == list(got["id"]), "claims added or removed: recompute"
    assert not stale, "stale small rows:\n" + "\n".join(stale)


@pytest.mark.parametrize("talk", TALKS)
def test_claims_csv_and_readme_come_from_claims_toml(talk):
    doc = claims.load_claims(talk)
    table = pd.read_csv(REPO / "scenarios" / talk / "claims.csv", keep_default_na=False)
    assert list(table["id"]) == [c["id"] for c in doc["claim"]]
    assert set(table["verdict"]) <= set(claims.VERDICTS)
    computed = table[table["verdict"].isin(["reproduced", "direction", "contradicted"])]
    assert (computed["computed_at"] != "").all(), "a computed row without its commit"
    readme = (REPO / "scenarios" / talk / "README.md").read_text()
    assert claims.replace_block(readme, talk, claims.markdown(table)) == readme, (
        "the README's claim table differs from claims.csv: run scenarios/claims.py --write"
    )


def test_verdicts():
    assert claims._side(3.8, 3.2, 0.25) == "reproduced"
    assert claims._side(3.8, 1.6, 0.25) == "direction"
    assert claims._side(3.8, 0.9, 0.25) == "contradicted"
    assert claims._side(0.5, 1.2, 0.25) == "contradicted"
    assert claims._order([1.4, 1.6, 1.8]) == claims._order([3.8, 4.2, 4.6])
    assert claims._order([2.1, 1.9, 2.4]) != claims._order([3.2, 3.6, 4.1])


def test_a_bad_claims_file_is_named(tmp_path, monkeypatch):
    (tmp_path / "talk").mkdir()
    (tmp_path / "talk" / "claims.toml").write_text(
        '[[claim]]\nid = "a"\nclaim = "x"\ntalk = 2.0\nkind = "not_run"\n'
    )
    monkeypatch.setattr(claims, "HERE", tmp_path)
    with pytest.raises(claims.ClaimsError, match="`a` \\(not_run\\) needs a `why`"):
        claims.load_claims("talk")
    assert claims.main(["talk", "--sweep", "full"]) == 2
