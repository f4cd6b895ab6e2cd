"""scenarios/tables.py: a reproduction's README tables come from its sweep."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import REPO, TINY_TOML
from incast.experiment import load_experiment
from incast.sweep import sweep


def _tables_module():
    spec = importlib.util.spec_from_file_location("tables", REPO / "scenarios" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tables_written_between_markers_and_checked(tmp_path):
    tables = _tables_module()
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    (tmp_path / "e.toml").write_text(
        'name = "tiny_study"\nbase = "tiny.toml"\nseeds = [1, 2]\n'
        '[variants.dctcp]\n[variants.newreno]\ntransport.cc = "newreno"\n'
        '[[compare]]\nbaseline = "newreno"\nmetric = "slowdown"\nstats = ["mean"]\n'
    )
    out = tmp_path / "tiny_study"
    sweep(load_experiment(tmp_path / "e.toml"), out, jobs=1, plots=False)
    readme = tmp_path / "README.md"
    readme.write_text("# Study\n\nHand-written text.\n")
    write = ["--readme", str(readme), "--write", "--experiment", str(tmp_path / "e.toml")]
    # By default the block is printed, and the README is left alone.
    assert tables.main(["smart_pause", str(out), "--readme", str(readme)]) == 0
    assert readme.read_text() == "# Study\n\nHand-written text.\n"
    assert tables.main(["smart_pause", str(out), *write]) == 0
    text = readme.read_text()
    assert text.startswith("# Study\n\nHand-written text.\n")
    assert "<!-- tables: tiny_study -->" in text and "<!-- /tables: tiny_study -->" in text
    assert "| point | variant | seeds | slowdown mean |" in text
    assert "| point | dctcp | 1,2 |" in text
    assert "slowdown_vs_newreno" in text
    # Up to date: --check passes; a hand edit inside the block makes it fail.
    assert tables.main(["smart_pause", str(out), "--readme", str(readme), "--check"]) == 0
    readme.write_text(text.replace("| point | dctcp | 1,2 |", "| point | dctcp | 1 |"))
    assert tables.main(["smart_pause", str(out), "--readme", str(readme), "--check"]) == 1
    # Writing again replaces the block, it does not add a second one.
    assert tables.main(["smart_pause", str(out), *write]) == 0
    assert readme.read_text().count("<!-- tables: tiny_study -->") == 1


def test_tables_refuse_a_sweep_made_with_other_settings(tmp_path):
    tables = _tables_module()
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    (tmp_path / "e.toml").write_text(
        'name = "tiny_study"\nbase = "tiny.toml"\nseeds = [1]\n[variants.dctcp]\n'
    )
    out = tmp_path / "tiny_study"
    sweep(
        load_experiment(tmp_path / "e.toml", overrides=[("duration", "1ms")]),
        out,
        jobs=1,
        plots=False,
    )
    readme = tmp_path / "README.md"
    readme.write_text("# Study\n")
    write = ["--readme", str(readme), "--write", "--experiment", str(tmp_path / "e.toml")]
    with pytest.raises(SystemExit, match="not made with the settings of"):
        tables.main(["smart_pause", str(out), *write])
    assert readme.read_text() == "# Study\n"
