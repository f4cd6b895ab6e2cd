"""`incast sweep`: parallel runs, resumable results, combined tables, comparisons."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import POISSON_TOML, TINY_TOML
from incast.cli import cli
from incast.combine import factor
from incast.experiment import load_experiment
from incast.rundir import PARTIAL_PREFIX, RUNS_DIR, is_finished, run_dir
from incast.sweep import LOCK_FILE, sweep

# 2 loads x 2 variants x 2 seeds = 8 small runs (about 20 Poisson flows each).
EXPERIMENT = """
name = "loads"
base = "poisson.toml"
seeds = [1, 2]
[parameters]
workload.poisson.0.load = [0.2, 0.4]
[variants.dctcp]
transport.cc = "dctcp"
[variants.newreno]
transport.cc = "newreno"
[[compare]]
baseline = "newreno"
metric = "slowdown"
stats = ["mean", "p99"]
[[compare]]
name = "drops"
baseline = "newreno"
metric = "drops.packets"
"""


@pytest.fixture
def exp_file(tmp_path: Path) -> Path:
    (tmp_path / "poisson.toml").write_text(POISSON_TOML)
    path = tmp_path / "loads.toml"
    path.write_text(EXPERIMENT)
    return path


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != LOCK_FILE
    }


def test_sweep_writes_combined_outputs(tmp_path, exp_file):
    exp = load_experiment(exp_file)
    out = tmp_path / "out"
    outcome = sweep(exp, out, jobs=2)
    assert outcome.complete and len(outcome.finished) == 8
    for run in exp.runs:
        d = run_dir(out, run)
        assert (d / "run.json").is_file() and (d / "flows.parquet").is_file()
        assert json.loads((d / "scenario.json").read_text()) == run.scenario
        assert d.name.endswith(run.hash[:12])
    points = pd.read_parquet(out / "points.parquet")
    assert len(points) == 8
    assert list(points.columns[:6]) == ["run", "point", "variant", "seed", "hash", "dir"]
    assert "param:workload.poisson.0.load" in points.columns
    assert "overall.slowdown.mean" in points.columns
    assert "buckets[<100KB].slowdown.p99" in points.columns
    # All per-flow tables in one call, with the partition columns.
    flows = pd.read_parquet(out / "flows")
    assert {"point", "variant", "seed"} <= set(flows.columns)
    total = sum(len(pd.read_parquet(run_dir(out, r) / "flows.parquet")) for r in exp.runs)
    assert len(flows) == total
    # Comparisons: the factor's mean over seeds equals the per-seed factors' mean
    # computed from the runs' own summaries.
    comps = pd.read_parquet(out / "comparisons.parquet")
    row = comps[
        (comps.comparison == "slowdown_vs_newreno")
        & (comps.point == "load=0.4")
        & (comps.stat == "mean")
        & (comps.bucket == "all")
    ].iloc[0]
    summaries = {
        (r.variant, r.seed): json.loads((run_dir(out, r) / "summary.json").read_text())
        for r in exp.runs
        if r.point == "load=0.4"
    }
    per_seed = [
        factor(
            summaries[("newreno", s)]["overall"]["slowdown"]["mean"],
            summaries[("dctcp", s)]["overall"]["slowdown"]["mean"],
            "lower",
        )
        for s in (1, 2)
    ]
    assert row.seeds == 2
    assert row.factor_mean == pytest.approx(sum(per_seed) / 2)
    assert row.factor_min == pytest.approx(min(per_seed))
    assert "| load=0.4 | newreno | dctcp | mean |" in (out / "comparisons.md").read_text()
    plots = sorted(p.name for p in (out / "plots").iterdir())
    assert "improvement_slowdown_vs_newreno.png" in plots
    assert "overall.slowdown.mean_vs_workload.poisson.0.load.png" in plots
    assert "pfc_drops_queues_by_variant.png" in plots
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "http://" not in html and "https://" not in html

    # A rerun skips every finished run.
    again = sweep(exp, out, jobs=2)
    assert again.finished == [] and len(again.skipped) == 8


def test_partial_and_unmarked_runs_are_not_taken_as_finished(tmp_path, exp_file):
    exp = load_experiment(exp_file)
    out = tmp_path / "out"
    first = exp.runs[0]
    # A half-written run: its directory exists but has no run.json (written last).
    d = run_dir(out, first)
    d.mkdir(parents=True)
    (d / "flows.parquet").write_bytes(b"truncated")
    partial = out / RUNS_DIR / f"{PARTIAL_PREFIX}{exp.runs[1].dirname}-123"
    partial.mkdir()
    assert not is_finished(out, first)
    from incast.experiment import Experiment

    two = Experiment(**{**exp.__dict__, "runs": exp.runs[:2]})
    # The stale half-written directory is replaced by the rerun.
    import shutil

    shutil.rmtree(d)
    outcome = sweep(two, out, jobs=1, plots=False)
    assert len(outcome.finished) == 2
    assert not partial.exists()
    assert is_finished(out, first)


def test_killed_sweep_resumes_to_byte_identical_tables(tmp_path, exp_file):
    """Kill a sweep half way (SIGKILL to its process group), rerun it, and get
    the same files, byte for byte, as a sweep that ran straight through."""
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    cmd = [sys.executable, "-m", "incast", "sweep", str(exp_file), "-j", "1", "-q"]
    subprocess.run([*cmd, "--out", str(straight)], check=True, timeout=300)

    proc = subprocess.Popen([*cmd, "--out", str(resumed)], start_new_session=True)
    runs = resumed / RUNS_DIR
    deadline = time.time() + 240
    # Killed as soon as two runs are done: the rest must not finish within one
    # poll (a run takes tens of milliseconds; waiting for more, with a coarser
    # poll, let a loaded machine see all eight done before the kill).
    while time.time() < deadline:
        done = [p for p in runs.glob("*/run.json")] if runs.is_dir() else []
        if len(done) >= 2:
            break
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    n_done = len(list(runs.glob("*/run.json")))
    assert 2 <= n_done < 8, f"killed after {n_done} runs"
    assert not (resumed / "points.parquet").exists()
    subprocess.run([*cmd, "--out", str(resumed)], check=True, timeout=300)
    a, b = _files(straight), _files(resumed)
    assert sorted(a) == sorted(b)
    different = [name for name in a if a[name] != b[name]]
    assert different == []


def test_cli_sweep_dry_run_set_and_seeds(tmp_path, exp_file):
    out = tmp_path / "o"
    result = CliRunner().invoke(
        cli,
        [
            "sweep",
            str(exp_file),
            "--out",
            str(out),
            "--dry-run",
            "--seeds",
            "3-5",
            "--set",
            "duration=0.5ms",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "12 runs (2 points x 2 variants x 3 seeds), all valid" in result.output
    assert "load=0.2/dctcp/seed5" in result.output
    assert not out.exists()


def test_cli_sweep_rejects_invalid_experiment_before_running(tmp_path, exp_file):
    exp_file.write_text(EXPERIMENT.replace('transport.cc = "newreno"', 'transport.cc = "vegas"'))
    out = tmp_path / "o"
    result = CliRunner().invoke(cli, ["sweep", str(exp_file), "--out", str(out)])
    assert result.exit_code == 2
    assert "run load=0.2/newreno/seed1" in result.output
    assert "vegas" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_cli_sweep_refuses_a_foreign_directory(tmp_path, exp_file):
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["sweep", str(exp_file), "--out", str(out)])
    assert result.exit_code == 2
    assert "is not empty" in result.output
    result = CliRunner().invoke(cli, ["sweep", str(exp_file), "--out", str(out), "--force"])
    assert result.exit_code == 2
    assert "not written by incast" in result.output
    assert (out / "notes.txt").read_text() == "mine"


def _ray_expected() -> bool:
    return os.environ.get("INCAST_EXPECT_RAY") == "1"


def test_ray_backend_matches_local(tmp_path, exp_file):
    """The Ray backend (a local Ray instance) writes the same results as the local one."""
    try:
        import ray  # noqa: F401
    except ImportError:
        if _ray_expected():
            raise
        pytest.skip("ray is not installed (pip install 'incast[ray]')")
    exp = load_experiment(exp_file)
    exp.runs = exp.runs[:4]
    local, remote = tmp_path / "local", tmp_path / "ray"
    sweep(exp, local, jobs=2, plots=False)
    outcome = sweep(exp, remote, ray_address="local", plots=False)
    assert outcome.complete and len(outcome.finished) == 4
    a, b = _files(local), _files(remote)
    assert a == b


def test_tiny_toml_sweep_of_listed_points(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    (tmp_path / "e.toml").write_text(
        'base = "tiny.toml"\n[[points]]\nlabel = "a"\n[[points]]\nlabel = "b"\n'
        'topology.link_rate = "25Gbps"\n'
    )
    out = tmp_path / "o"
    result = CliRunner().invoke(cli, ["sweep", str(tmp_path / "e.toml"), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    points = pd.read_csv(out / "points.csv")
    assert points["point"].tolist() == ["a", "b"]
    assert (out / "plots" / "overall.slowdown.mean_by_point.png").is_file()


def test_resumed_sweep_names_runs_of_another_core_build(tmp_path, exp_file):
    """A sweep resumed after the simulator changed keeps its finished runs but
    says which came from another build of the core; --rerun-stale runs them again
    (here the same build, so the files come back byte for byte)."""
    from incast.rundir import core_build

    exp = load_experiment(exp_file)
    out = tmp_path / "out"
    assert sweep(exp, out, jobs=1).complete
    before = _files(out)
    for run in exp.runs:
        meta = json.loads((run_dir(out, run) / "run.json").read_text())
        assert meta["core_build"] == core_build() and len(core_build()) == 16
    older = exp.runs[:3]  # as if an older core had made these three
    for run in older:
        path = run_dir(out, run) / "run.json"
        meta = json.loads(path.read_text())
        meta["core_build"] = "0123456789abcdef"
        path.write_text(json.dumps(meta, sort_keys=True, indent=2) + "\n")

    base = ["sweep", str(exp_file), "--out", str(out), "-j", "1", "-q"]
    listed = CliRunner().invoke(cli, [*base, "--dry-run"])
    assert listed.exit_code == 0, listed.output
    states = [line.split()[0] for line in listed.output.splitlines()[:-1]]
    assert states == ["stale"] * 3 + ["done"] * 5
    kept = CliRunner().invoke(cli, base)
    assert kept.exit_code == 0, kept.output
    assert "warning: 3 of the finished runs" in kept.output
    assert "--rerun-stale" in kept.output
    # Kept, not rerun: their run.json still names the other build.
    builds = [json.loads((run_dir(out, r) / "run.json").read_text()) for r in older]
    assert [meta["core_build"] for meta in builds] == ["0123456789abcdef"] * 3

    rerun = sweep(exp, out, jobs=1, rerun_stale=True)
    assert sorted(r.index for r in rerun.finished) == [r.index for r in older]
    assert _files(out) == before
    again = CliRunner().invoke(cli, base)
    assert again.exit_code == 0 and "warning" not in again.output
