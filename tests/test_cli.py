"""The `incast` command line, through click's CliRunner."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import INCAST_SCENARIO
from incast.cli import cli
from incast.results import TABLES

PNGS = ("slowdown_by_size.png", "slowdown_cdf.png", "queue_length.png")


def test_run_writes_everything(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(INCAST_SCENARIO), "--out", str(out)])
    assert result.exit_code == 0, result.output
    for table in TABLES:
        assert (out / f"{table}.parquet").is_file(), table
    for png in PNGS:
        assert (out / png).is_file(), png
    summary = json.loads((out / "summary.json").read_text())
    # The bucket table is printed.
    assert "by flow size" in result.output
    for bucket in summary["buckets"]:
        if bucket.get("count"):
            assert bucket["label"] in result.output
    assert str(out) in result.output
    assert "Traceback" not in result.output


def test_run_seed_and_no_plots(tmp_path, tiny_file):
    out = tmp_path / "o"
    result = CliRunner().invoke(
        cli, ["run", str(tiny_file), "--out", str(out), "--seed", "9", "--no-plots", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert not list(out.glob("*.png"))
    assert json.loads((out / "summary.json").read_text())["seed"] == 9


def test_run_default_out_dir(tmp_path, monkeypatch, tiny_file):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--no-plots"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "incast-out" / "tiny" / "flows.parquet").is_file()


def test_validate_ok(tiny_file):
    result = CliRunner().invoke(cli, ["validate", str(tiny_file)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: tiny")


def test_validate_unknown_key(unknown_key_file):
    result = CliRunner().invoke(cli, ["validate", str(unknown_key_file)])
    assert result.exit_code == 2
    assert "bogus_knob" in result.output
    assert "Traceback" not in result.output


def test_run_bad_scenario_exits_2(tmp_path, unknown_key_file):
    result = CliRunner().invoke(cli, ["run", str(unknown_key_file), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "bogus_knob" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "x").exists()


def test_schema(tmp_path):
    result = CliRunner().invoke(cli, ["schema"])
    assert result.exit_code == 0, result.output
    assert "properties" in json.loads(result.output)
    target = tmp_path / "schema.json"
    result = CliRunner().invoke(cli, ["schema", "--out", str(target)])
    assert result.exit_code == 0, result.output
    assert "properties" in json.loads(target.read_text())


def test_cdfs_lists_websearch():
    result = CliRunner().invoke(cli, ["cdfs"])
    assert result.exit_code == 0, result.output
    assert "websearch" in result.output.split()
