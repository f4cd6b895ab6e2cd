"""The `incast` command line, through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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
    assert (tmp_path / "incast-out" / "tiny" / "seed1" / "flows.parquet").is_file()


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


# --- output directories, overrides, several files (issue 17 item 11, issue 18 item 6) ---


class _NoSimulation:
    """A stand-in core whose Simulation must never be built."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def Simulation(self, *args):  # noqa: N802
        raise AssertionError("the simulation ran before the output path was checked")


@pytest.mark.parametrize("bad", ["/proc/xyz", "FILE/sub"])
def test_bad_out_path_fails_before_running(tmp_path, monkeypatch, tiny_file, bad):
    import incast.cli as cli_mod
    from incast import _core

    monkeypatch.setattr(cli_mod, "_core_module", lambda: _NoSimulation(_core))
    if bad.startswith("FILE"):
        (tmp_path / "FILE").write_text("x")
        bad = str(tmp_path / bad)
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--out", bad])
    assert result.exit_code == 2, result.output
    assert "error: cannot create" in result.output
    assert "Traceback" not in result.output


def test_non_empty_out_is_refused_and_force_replaces_it(tmp_path, tiny_file):
    out = tmp_path / "out"
    out.mkdir()
    (out / "unrelated.txt").write_text("keep me")
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out), "-q"])
    assert result.exit_code == 2
    assert "is not empty" in result.output and "--force" in result.output
    # --force does not delete a directory incast did not write.
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out), "-q", "--force"])
    assert result.exit_code == 2 and "not written by incast" in result.output
    assert (out / "unrelated.txt").read_text() == "keep me"
    # An earlier incast output is replaced as a whole: no stale file stays.
    out2 = tmp_path / "out2"
    assert CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out2), "-q"]).exit_code == 0
    (out2 / "stale.png").write_bytes(b"old plot")
    result = CliRunner().invoke(
        cli, ["run", str(tiny_file), "--out", str(out2), "-q", "--force", "--no-plots"]
    )
    assert result.exit_code == 0, result.output
    assert not (out2 / "stale.png").exists()
    assert not list(out2.glob("*.png"))
    assert (out2 / "flows.parquet").is_file() and (out2 / "report.html").is_file()


def test_default_out_keyed_by_seed_and_overrides(tmp_path, monkeypatch, tiny_file):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in ([], ["--seed", "2"], ["--set", "topology.link_rate=25Gbps"]):
        result = runner.invoke(cli, ["run", str(tiny_file), "-q", "--no-plots", *args])
        assert result.exit_code == 0, result.output
    dirs = sorted(p.name for p in (tmp_path / "incast-out" / "tiny").iterdir())
    assert dirs == ["seed1", "seed1_topology.link_rate=25Gbps", "seed2"]
    s = json.loads(
        (tmp_path / "incast-out/tiny/seed1_topology.link_rate=25Gbps/scenario.json").read_text()
    )
    assert s["seed"] == 1
    # The same run again reuses its directory (same scenario, same results) ...
    assert runner.invoke(cli, ["run", str(tiny_file), "-q", "--no-plots"]).exit_code == 0
    # ... but another scenario under the same name does not overwrite it silently.
    other = tmp_path / "other.toml"
    other.write_text(tiny_file.read_text().replace('size = "100KB"', 'size = "50KB"', 1))
    result = runner.invoke(cli, ["run", str(other), "-q", "--no-plots"])
    assert result.exit_code == 2
    assert "different scenario" in result.output


def test_set_overrides_and_errors(tmp_path, tiny_file):
    out = tmp_path / "o"
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(tiny_file),
            "--out",
            str(out),
            "-q",
            "--no-plots",
            "--set",
            "transport.cc=newreno",
            "--set",
            "workload.flows.0.size=20KB",
        ],
    )
    assert result.exit_code == 0, result.output
    s = json.loads((out / "scenario.json").read_text())
    assert "newreno" in json.dumps(s["transport"])
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--set", "nonsense"])
    assert result.exit_code == 2 and "key.path=value" in result.output
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--set", "workload.flows.9.size=1"])
    assert result.exit_code == 2 and "index 9 is past the end" in result.output


def test_several_files_in_one_run(tmp_path, tiny_file):
    second = tmp_path / "second.toml"
    second.write_text(tiny_file.read_text().replace('name = "tiny"', 'name = "second"'))
    out = tmp_path / "o"
    result = CliRunner().invoke(
        cli, ["run", str(tiny_file), str(second), "--out", str(out), "-q", "--no-plots"]
    )
    assert result.exit_code == 0, result.output
    assert (out / "tiny" / "summary.json").is_file()
    assert (out / "second" / "summary.json").is_file()


def test_ctrl_c_during_start_up_is_clean(tmp_path, monkeypatch, tiny_file):
    import incast.cli as cli_mod

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_mod, "_prepare_scenario", interrupted)
    proc_out = tmp_path / "o"
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as info:
        cli_mod.main(["run", str(tiny_file), "--out", str(proc_out)])
    assert info.value.code == 130
    assert "interrupted" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert not proc_out.exists()


def test_ctrl_c_while_writing_leaves_no_directory(tmp_path, monkeypatch, tiny_file):
    from incast.results import Results

    def interrupted(self, out_dir):
        (Path(out_dir) / "flows.parquet").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(Results, "to_parquet", interrupted)
    out = tmp_path / "new" / "out"
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out)])
    assert result.exit_code == 130
    assert "no results written" in result.output
    assert not out.exists() and not (tmp_path / "new").exists()


def test_ctrl_c_in_a_real_process(tmp_path):
    """SIGINT to a real `incast run` (while the core loads, validates or simulates):
    one line, exit code 130, no traceback, no output directory."""
    import signal
    import subprocess
    import sys
    import time

    from conftest import SCENARIOS

    out = tmp_path / "o"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "incast",
            "run",
            str(SCENARIOS / "leaf_spine_websearch_dctcp.toml"),
            "--out",
            str(out),
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        # A suite started in the background (`... &` without job control) ignores SIGINT,
        # and a child inherits that, so Python would install no KeyboardInterrupt handler:
        # give the child the default, as a terminal's Ctrl-C finds it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_compare_prints_and_draws_differences(tmp_path, tiny_file, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    monkeypatch.chdir(tmp_path)  # the chart goes to the current directory
    runner = CliRunner()
    assert (
        runner.invoke(cli, ["run", str(tiny_file), "--out", str(a), "-q", "--no-plots"]).exit_code
        == 0
    )
    result = runner.invoke(
        cli,
        [
            "run",
            str(tiny_file),
            "--out",
            str(b),
            "-q",
            "--no-plots",
            "--set",
            "topology.link_rate=25Gbps",
        ],
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["compare", str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert "summary metrics differ" in result.output
    assert "overall.fct_us.mean" in result.output
    assert (tmp_path / "compare_a_vs_b.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(b.glob("*.png"))
    same = runner.invoke(cli, ["compare", str(a), str(a), "--plot", str(tmp_path / "x.png")])
    assert "identical summary metrics" in same.output


def test_help_does_not_import_heavy_libraries():
    import subprocess
    import sys

    code = (
        "import sys, incast.cli\n"
        "heavy = [m for m in ('pandas', 'pyarrow', 'matplotlib', 'numpy', 'rich', 'incast._core')"
        " if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ctrl_c_in_the_first_of_several_files_leaves_no_directory(tmp_path, monkeypatch, tiny_file):
    from incast.results import Results

    def interrupted(self, out_dir):
        raise KeyboardInterrupt

    monkeypatch.setattr(Results, "to_parquet", interrupted)
    second = tmp_path / "second.toml"
    second.write_text(tiny_file.read_text().replace('name = "tiny"', 'name = "second"'))
    out = tmp_path / "o"
    result = CliRunner().invoke(cli, ["run", str(tiny_file), str(second), "--out", str(out)])
    assert result.exit_code == 130
    assert not out.exists()
