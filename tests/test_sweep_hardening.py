"""Sweeps and runs against hostile inputs (issue 40): long labels, two writers,
a killed sweep, huge products, misspelt metrics, damaged runs, planted links."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import POISSON_TOML, REPO, TINY_TOML
from incast.cli import cli
from incast.combine import partition_value
from incast.experiment import (
    MAX_RUNS,
    ExperimentError,
    bounded_name,
    describe_runs,
    load_experiment,
)
from incast.outdir import LOCK_FILE, OutDirError, OutputLock, locked
from incast.rundir import RUNS_DIR, is_finished, run_dir
from incast.summary_keys import SummaryKeys, flatten_summary
from incast.sweep import simulate, sweep

TWO_POINTS = """
name = "two"
base = "tiny.toml"
[[points]]
label = "a"
[[points]]
label = "b"
topology.link_rate = "25Gbps"
"""


def _experiment(tmp_path: Path, text: str = TWO_POINTS) -> Path:
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    path = tmp_path / "e.toml"
    path.write_text(text)
    return path


# --- Defect 1: names on disk are bounded, whatever the label ----------------------------

LONG_LABELS = """
name = "long"
base = "tiny.toml"
[[points]]
label = "{label}"
[parameters]
switch.ecn = [{{ kind = "step", k = "20KB" }}]
transport.cc = [{{ algorithm = "dctcp", g = 0.0625 }}]
switch.admission = [{{ kind = "dynamic", alpha = 1.0 }}, {{ kind = "dynamic", alpha = 2.0 }}]
"""


def test_long_point_labels_sweep_and_combine(tmp_path):
    exp = load_experiment(_experiment(tmp_path, LONG_LABELS.format(label="x" * 100)))
    assert all(len(quote(r.point, safe="")) > 255 for r in exp.runs)  # too long before
    out = tmp_path / "out"
    outcome = sweep(exp, out, jobs=1)
    assert outcome.complete and len(outcome.finished) == 2
    for path in out.rglob("*"):
        assert len(path.name.encode()) <= 255, path
    flows = pd.read_parquet(out / "flows")
    assert len(flows) == 4 and flows["point"].nunique() == 2  # the two points stay apart
    assert len(pd.read_csv(out / "points.csv")) == 2


def test_short_names_stay_as_they_were():
    assert partition_value("load=0.2") == "load%3D0.2"
    assert bounded_name("overall.slowdown.mean") == "overall.slowdown.mean"
    a, b = partition_value("p" * 300 + "a"), partition_value("p" * 300 + "b")
    assert a != b and len(a) <= 120 and a.startswith("p" * 50)
    # A cut never splits a %XX escape.
    cut = partition_value("," * 200)
    assert cut.split("~")[0].endswith("%2C")
    assert bounded_name("m" * 200) != bounded_name("m" * 199 + "n")
    assert len(bounded_name("m" * 200)) == 80


# --- Defect 2: one writer per output directory -------------------------------------------


def test_run_refuses_a_directory_another_writer_holds(tmp_path, tiny_file):
    out = tmp_path / "o"
    with locked(out):  # as a sweep (or another run) holds it while it writes
        result = CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out), "-q"])
        assert result.exit_code == 2, result.output
        assert "another incast run or sweep is writing to" in result.output
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert (out / "summary.json").is_file() and (out / LOCK_FILE).is_file()
    # The run released the lock when it finished.
    lock = OutputLock(out)
    lock.acquire()
    lock.release()


def test_sweep_refuses_a_directory_a_run_holds(tmp_path):
    exp = load_experiment(_experiment(tmp_path))
    out = tmp_path / "o"
    with locked(out):
        result = CliRunner().invoke(cli, ["sweep", str(tmp_path / "e.toml"), "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert "another incast run or sweep is writing to" in result.output
    assert not (out / RUNS_DIR).exists() and not any(is_finished(out, r) for r in exp.runs)


# --- Defect 3: workers die with the sweep ------------------------------------------------


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killing_the_sweep_kills_its_workers(tmp_path, how):
    (tmp_path / "poisson.toml").write_text(
        POISSON_TOML.replace('duration = "1ms"', 'duration = "40ms"')
    )
    (tmp_path / "e.toml").write_text('base = "poisson.toml"\nseeds = [1, 2, 3, 4]\n')
    cmd = [sys.executable, "-m", "incast", "sweep", str(tmp_path / "e.toml"), "-j", "2", "-q"]
    proc = subprocess.Popen(
        [*cmd, "--out", str(tmp_path / "o")], start_new_session=True, stderr=subprocess.DEVNULL
    )
    children: set[int] = set()
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(children) < 3:  # 2 workers + resource tracker
            children |= _children(proc.pid)
            time.sleep(0.05)
        assert len(children) >= 3, f"the sweep started {len(children)} processes"
        time.sleep(1.0)  # the workers are importing or simulating
        os.kill(proc.pid, how)  # the sweep's main process only
        proc.wait()
        deadline = time.time() + 15
        while time.time() < deadline and any(_alive(p) for p in children):
            time.sleep(0.1)
        assert [p for p in children if _alive(p)] == []
    finally:
        for pid in children:  # the processes this test started, should any be left
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- Defect 4: a bound on the runs, counted before anything is expanded ------------------


def test_a_product_above_the_limit_is_refused_before_expanding(tmp_path):
    values = ", ".join(f'"{i}KB"' for i in range(1, 102))
    text = f'base = "tiny.toml"\n[parameters]\nswitch.buffer = [{values}]\n'
    text += "topology.link_delay = [" + ", ".join(f'"{i}us"' for i in range(1, 101)) + "]\n"
    t0 = time.perf_counter()
    with pytest.raises(ExperimentError) as info:
        load_experiment(_experiment(tmp_path, text))
    assert time.perf_counter() - t0 < 5
    msg = str(info.value)
    assert f"10,100 runs, more than the {MAX_RUNS:,}" in msg
    assert "give parameters.switch.buffer fewer values than its 101" in msg
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "e.toml")])
    assert result.exit_code == 2 and "10,100 runs" in result.output


def test_seeds_range_is_counted_not_expanded(tmp_path):
    path = _experiment(tmp_path)
    result = CliRunner().invoke(cli, ["sweep", str(path), "--seeds", "0-99999999999", "--dry-run"])
    assert result.exit_code == 2
    assert "100,000,000,000 seeds" in result.output and "--seeds" in result.output
    assert "Traceback" not in result.output
    with pytest.raises(ExperimentError, match=r"seeds \(--seeds\)"):
        load_experiment(path, seeds=list(range(MAX_RUNS // 2 + 1)))


# --- Defect 8: metric names are checked before the runs ----------------------------------


def test_misspelt_metrics_are_refused_with_a_suggestion(tmp_path):
    text = TWO_POINTS.replace(
        '[[points]]\nlabel = "a"',
        '[variants.a]\n[variants.b]\ntransport.cc = "newreno"\n[[points]]\nlabel = "a"',
    )
    text += '[[compare]]\nbaseline = "a"\nmetric = "drops.packet"\nstats = ["mean", "p99"]\n'
    text += '[report]\nmetrics = ["overall.slowdown.maen", "buckets[<100KB].slowdown.p99"]\n'
    with pytest.raises(ExperimentError) as info:
        load_experiment(_experiment(tmp_path, text))
    msg = str(info.value)
    assert "compare[0].metric: 'drops.packet' is not a metric" in msg
    assert "did you mean 'drops.packets'" in msg
    assert "report.metrics[0]: 'overall.slowdown.maen'" in msg
    assert "did you mean 'overall.slowdown.mean'" in msg
    assert "report.metrics[1]" not in msg  # a bucket's key is a metric
    with pytest.raises(ExperimentError, match=r"compare\[0\].stats: 'p9' is not a statistic"):
        load_experiment(_experiment(tmp_path, text.replace('"p99"]', '"p9"]')))


def test_valid_metric_names_are_accepted_and_compared(tmp_path):
    (tmp_path / "poisson.toml").write_text(POISSON_TOML)
    text = """
base = "poisson.toml"
[variants.dctcp]
[variants.newreno]
transport.cc = "newreno"
[[compare]]
name = "small_p99"
baseline = "newreno"
metric = "buckets[<100KB].slowdown.p99"
[[compare]]
baseline = "newreno"
metric = "incasts.completion_us.p95"
[report]
metrics = ["queues.max_bytes", "stopped_flows.count", "buckets_background[<100KB].fct_us.mean"]
"""
    (tmp_path / "e.toml").write_text(text)
    exp = load_experiment(tmp_path / "e.toml")
    out = tmp_path / "o"
    sweep(exp, out, jobs=2, plots=False)
    comps = pd.read_parquet(out / "comparisons.parquet")
    row = comps[comps.comparison == "small_p99"].iloc[0]
    summaries = {
        r.variant: json.loads((run_dir(out, r) / "summary.json").read_text()) for r in exp.runs
    }
    small = {v: flatten_summary(s)["buckets[<100KB].slowdown.p99"] for v, s in summaries.items()}
    assert row.factor_mean == pytest.approx(small["newreno"] / small["dctcp"])


FEATURES = [
    # (experiment or scenario, overrides): together they have PFC, congestion isolation,
    # edge pausing, congestion management, NIC receive queues, several congestion
    # controls, stopped flows and incasts beside other traffic.
    (
        "on_ramp/cubic_two_flows_experiment.toml",
        [("stop", "5ms"), ("workload.flows.*.stop", "5ms")],
    ),
    (
        "congestion_isolation/base_small.toml",
        [("duration", "0.3ms"), ("switch.ci.queues", [{"class": 3, "cfq": [2]}])],
    ),
    (
        "ibm_ecm/base.toml",
        [
            ("duration", "0.5ms"),
            ("workload.hotspot.0.start", "0.1ms"),
            ("workload.hotspot.0.duration", "0.3ms"),
        ],
    ),
    ("netronome_fb/reads_experiment.toml", []),
    ("bulk_on_off.toml", []),
]


@pytest.mark.parametrize("name,overrides", FEATURES, ids=[f for f, _ in FEATURES])
def test_every_key_a_real_summary_has_is_known_before_the_run(name, overrides):
    """The key check cannot drift from the core: every key of a real run's summary is
    known from the zero-time build of its scenario and the reference run."""

    def is_description(key: str) -> bool:
        return key.rsplit(".", 1)[-1] in ("label", "lo", "hi")

    path = REPO / "scenarios" / name
    source = path if "experiment" in name else {"base": str(path)}
    exp = load_experiment(source, overrides=overrides)
    sections = set()
    for run in exp.runs:
        summary = json.loads(simulate(run.scenario_json(), run.base_dir)["files"]["summary.json"])
        keys = SummaryKeys()
        keys.add_run(run)
        # Every measuring key (a bucket's label and bounds describe it: no metric).
        flat = {k: v for k, v in flatten_summary(summary).items() if not is_description(k)}
        assert [k for k in flat if not keys.knows(k, in_summary=True)] == []
        sections |= {k.split(".")[0] for k in flat}
    expected = {
        "on_ramp/cubic_two_flows_experiment.toml": {"edge", "stopped_flows"},
        "congestion_isolation/base_small.toml": {"ci", "pfc"},
        "ibm_ecm/base.toml": {"cm"},
        "netronome_fb/reads_experiment.toml": {"nic_receive", "by_cc"},
        "bulk_on_off.toml": {"by_cc", "stopped_flows"},
    }[name]
    assert expected <= sections


# --- Defect 9: damaged finished runs are found, redone and reported ----------------------


def test_damaged_runs_are_redone_and_reported(tmp_path):
    path = _experiment(tmp_path)
    out = tmp_path / "o"
    runner = CliRunner()
    assert runner.invoke(cli, ["sweep", str(path), "--out", str(out), "-q"]).exit_code == 0
    exp = load_experiment(path)
    a, b = exp.runs
    (run_dir(out, a) / "summary.json").write_text("")
    (run_dir(out, b) / "run.json").unlink()
    assert not is_finished(out, a) and not is_finished(out, b)
    dry = runner.invoke(cli, ["sweep", str(path), "--out", str(out), "--dry-run"])
    assert "damaged  a/base/seed1" in dry.output and "summary.json" in dry.output
    result = runner.invoke(cli, ["sweep", str(path), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert (
        "damaged run a/base/seed1: summary.json is missing, empty or not JSON; removed and "
        "run again" in result.output
    )
    assert "damaged run b/base/seed1: run.json is missing; removed and run again" in result.output
    assert is_finished(out, a) and is_finished(out, b)
    assert len(pd.read_csv(out / "points.csv")) == 2
    # A file cut short is found by its size in run.json.
    flows = run_dir(out, a) / "flows.parquet"
    size = flows.stat().st_size
    flows.write_bytes(flows.read_bytes()[:100])
    outcome = sweep(exp, out, jobs=1, plots=False)
    assert outcome.damaged == {a.index: f"flows.parquet has 100 bytes, not {size:,}"}
    assert [r.label for r in outcome.finished] == [a.label]
    assert flows.stat().st_size == size
    # A file overwritten in place at the same size is found by its digest in run.json.
    data = bytearray(flows.read_bytes())
    data[-20:-10] = bytes(10)
    flows.write_bytes(bytes(data))
    outcome = sweep(exp, out, jobs=1, plots=False)
    assert outcome.damaged == {
        a.index: "flows.parquet was changed since the run wrote it (its SHA-256 differs)"
    }
    assert [r.label for r in outcome.finished] == [a.label]


# --- Defect 13: no symbolic link inside an output tree -----------------------------------


@pytest.mark.parametrize("planted", ["runs", "flows", LOCK_FILE])
def test_a_planted_link_in_a_sweep_directory_is_refused(tmp_path, planted):
    path = _experiment(tmp_path)
    out = tmp_path / "o"
    assert CliRunner().invoke(cli, ["sweep", str(path), "--out", str(out), "-q"]).exit_code == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep")
    target = outside / "precious.txt" if planted == LOCK_FILE else outside
    victim = out / planted
    if victim.is_dir():
        import shutil

        shutil.rmtree(victim)
    else:
        victim.unlink()
    victim.symlink_to(target)
    result = CliRunner().invoke(cli, ["sweep", str(path), "--out", str(out), "--force", "-q"])
    assert result.exit_code == 2, result.output
    assert "symbolic link" in result.output and str(victim) in result.output
    # The library refuses too (under its lock), whatever the CLI checked before.
    with pytest.raises(OutDirError, match="symbolic link"):
        sweep(load_experiment(path), out, jobs=1, fresh=True)
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == "keep"


def test_a_planted_link_in_a_run_directory_is_refused(tmp_path, tiny_file):
    out = tmp_path / "o"
    assert CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out), "-q"]).exit_code == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (out / "extra").symlink_to(outside)
    result = CliRunner().invoke(cli, ["run", str(tiny_file), "--out", str(out), "--force", "-q"])
    assert result.exit_code == 2 and "symbolic link" in result.output
    assert (out / "extra").is_symlink() and outside.is_dir()


# --- Papercuts 8 and 10 --------------------------------------------------------------------


def test_validate_counts_runs_right(tmp_path):
    one = load_experiment(_experiment(tmp_path, 'base = "tiny.toml"\n'))
    assert describe_runs(one) == "1 run (1 point x 1 variant x 1 seed)"
    listed = load_experiment(
        _experiment(
            tmp_path,
            'base = "tiny.toml"\nseeds = [1, 2]\n[variants.a]\n[variants.b]\n'
            '[[points]]\nlabel = "x"\n[[points]]\nlabel = "y"\nvariants = ["a"]\nseeds = [3]\n',
        )
    )
    assert len(listed.runs) == 5
    assert describe_runs(listed) == (
        "5 runs over 2 points, 2 variants and 3 seeds (not every point runs every variant and seed)"
    )
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "e.toml")])
    assert "5 runs over 2 points" in result.output


def test_ray_missing_is_said_before_anything_is_created(tmp_path, monkeypatch):
    path = _experiment(tmp_path)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    out = tmp_path / "o"
    result = CliRunner().invoke(cli, ["sweep", str(path), "--out", str(out), "--ray", "local"])
    assert result.exit_code == 1
    assert "pip install 'incast[ray]'" in result.output
    assert not out.exists()
    with pytest.raises(RuntimeError, match="needs Ray"):
        sweep(load_experiment(path), out, ray_address="local")
    assert not out.exists()
